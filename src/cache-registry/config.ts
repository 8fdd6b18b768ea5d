// The server configuration's `cacheNodes` section (the registry of build cache nodes). Its JSON
// Schema is the one place each setting is made; its descriptor in src/config/sections.ts puts it
// into the whole file's schema.

import { checkSection, compileSchema, type Agrees } from '../config/schema-check.js';

export interface CacheNodesSettings {
  /** A node not heard from for this long is shown offline. */
  readonly offlineAfterSeconds: number;
}

export const cacheNodesSchema = {
  description: 'The registry of build cache nodes.',
  type: 'object',
  additionalProperties: false,
  properties: {
    offlineAfterSeconds: { description: 'A node not heard from for this long is shown offline, in seconds.', type: 'integer', minimum: 1, maximum: 2_592_000, default: 300 },
  },
} as const;

const agrees: Agrees<typeof cacheNodesSchema, CacheNodesSettings> = true;
void agrees;

export const cacheNodesValidator = compileSchema(cacheNodesSchema);

/** Checks the section (absent: defaults); throws a ConfigError naming each faulty setting. */
export function parseCacheNodesSection(section: unknown): CacheNodesSettings {
  return checkSection<CacheNodesSettings>(cacheNodesValidator, section, ['cacheNodes']);
}
