// The `export` section of the server configuration: its JSON Schema (names, ranges, defaults) is
// the one place each setting is made; its descriptor in src/config/sections.ts puts it into the
// schema of the whole file.
//
//   export:
//     heartbeatMs: 10000        # SSE comment sent this often while a stream is idle-waiting
//     retryAfterSeconds: 5      # Retry-After of the 503 answered while a build is being stored
//     anonymousAccess: false    # serve unauthenticated requests (seed 001: disabled by default)
//     corsOrigins: '*'          # origins allowed for bearer-authenticated browser clients
//     gzipLevel: 1              # zlib level for Accept-Encoding: gzip (1 fastest .. 9 smallest)

import { checkSection, compileSchema, defaultsOf, type Agrees, type Wording } from '../config/schema-check.js';

export interface ExportOptions {
  readonly heartbeatMs: number;
  readonly retryAfterSeconds: number;
  readonly anonymousAccess: boolean;
  /** '*' or the exact origins (scheme://host[:port]) that may read bearer-authenticated responses. */
  readonly corsOrigins: '*' | readonly string[];
  /**
   * zlib level of gzip-encoded streams. 1 by default: on SSE JSON it gives most of level 6's
   * reduction at about 1.6x the messages per CPU second (bench/export.ts).
   */
  readonly gzipLevel: number;
}

const ORIGIN = '^https?://[^/\\s]+$';

export const exportSchema = {
  description: 'The SSE export API.',
  type: 'object',
  additionalProperties: false,
  properties: {
    heartbeatMs: { description: 'SSE comment sent this often while a stream waits, in ms.', type: 'integer', minimum: 10, maximum: 3_600_000, default: 10_000 },
    retryAfterSeconds: { description: 'Retry-After of the 503 answered while a build is being stored.', type: 'integer', minimum: 1, maximum: 86_400, default: 5 },
    anonymousAccess: { description: 'Serve unauthenticated requests.', type: 'boolean', default: false },
    corsOrigins: {
      description: "'*' or the origins (scheme://host[:port]) that may read bearer-authenticated responses.",
      type: ['string', 'array'],
      default: '*',
      if: { type: 'string' },
      then: { const: '*' },
      else: { items: { type: 'string', pattern: ORIGIN } },
    },
    gzipLevel: { description: 'zlib level of gzip-encoded streams (1 fastest .. 9 smallest).', type: 'integer', minimum: 1, maximum: 9, default: 1 },
  },
} as const;

const agrees: Agrees<typeof exportSchema, ExportOptions> = true;
void agrees;

export const exportWording: Wording = {
  pattern: (segments) => (segments.includes('corsOrigins') ? 'must be an origin like https://dash.example.com (scheme and host, no path)' : undefined),
};

export const exportValidator = compileSchema(exportSchema);

export const DEFAULT_EXPORT_OPTIONS = defaultsOf(exportSchema) as unknown as ExportOptions;

/** Checks the section (absent: defaults); throws a ConfigError naming each faulty setting. */
export function parseExportOptions(section: unknown): ExportOptions {
  return checkSection<ExportOptions>(exportValidator, section, ['export'], exportWording);
}
