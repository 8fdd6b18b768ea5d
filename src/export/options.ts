// The `export` section of the server configuration, parsed here (each face owns its section).
//
//   export:
//     heartbeatMs: 10000        # SSE comment sent this often while a stream is idle-waiting
//     retryAfterSeconds: 5      # Retry-After of the 503 answered while a build is being stored
//     anonymousAccess: false    # serve unauthenticated requests (seed 001: disabled by default)
//     corsOrigins: '*'          # origins allowed for bearer-authenticated browser clients
//     gzipLevel: 1              # zlib level for Accept-Encoding: gzip (1 fastest .. 9 smallest)

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

export const DEFAULT_EXPORT_OPTIONS: ExportOptions = {
  heartbeatMs: 10_000,
  retryAfterSeconds: 5,
  anonymousAccess: false,
  corsOrigins: '*',
  gzipLevel: 1,
};

export class ExportConfigError extends Error {
  override readonly name = 'ExportConfigError';
}

function positiveInteger(key: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ExportConfigError(`export.${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Parses the config section (absent: defaults). Throws ExportConfigError naming the faulty key. */
export function parseExportOptions(section: unknown): ExportOptions {
  if (section === undefined || section === null) return DEFAULT_EXPORT_OPTIONS;
  if (typeof section !== 'object' || Array.isArray(section)) {
    throw new ExportConfigError(`export must be a mapping, got ${Array.isArray(section) ? 'a list' : typeof section}`);
  }
  let options: ExportOptions = DEFAULT_EXPORT_OPTIONS;
  for (const [key, value] of Object.entries(section as Record<string, unknown>)) {
    switch (key) {
      case 'heartbeatMs':
        options = { ...options, heartbeatMs: positiveInteger(key, value, 10, 3_600_000) };
        break;
      case 'retryAfterSeconds':
        options = { ...options, retryAfterSeconds: positiveInteger(key, value, 1, 86_400) };
        break;
      case 'anonymousAccess':
        if (typeof value !== 'boolean') throw new ExportConfigError(`export.anonymousAccess must be true or false, got ${JSON.stringify(value)}`);
        options = { ...options, anonymousAccess: value };
        break;
      case 'corsOrigins':
        if (value === '*') options = { ...options, corsOrigins: '*' };
        else if (Array.isArray(value) && value.every((o) => typeof o === 'string' && /^https?:\/\/[^/\s]+$/.test(o))) {
          options = { ...options, corsOrigins: value as string[] };
        } else {
          throw new ExportConfigError(`export.corsOrigins must be '*' or a list of origins like https://dash.example.com, got ${JSON.stringify(value)}`);
        }
        break;
      case 'gzipLevel':
        options = { ...options, gzipLevel: positiveInteger(key, value, 1, 9) };
        break;
      default:
        throw new ExportConfigError(`export.${key} is not a setting; known: heartbeatMs, retryAfterSeconds, anonymousAccess, corsOrigins, gzipLevel`);
    }
  }
  return options;
}
