// The server configuration's `playground` section (the query playground page). Its JSON Schema is
// the one place each setting is made; its descriptor in src/config/sections.ts puts it into the
// whole file's schema. The plugin (src/http/playground-plugin.ts) fills in the default page
// directory, which it knows.

import { resolve } from 'node:path';
import { checkSection, compileSchema, type Agrees, type Wording } from './schema-check.js';

export interface PlaygroundSection {
  /** Serve the page and the explain endpoint (default true). */
  readonly enabled: boolean;
  /** Directory of the built page, resolved against the working directory (absent: the installation's). */
  readonly root?: string;
}

export const playgroundSchema = {
  description: 'The query playground page and its explain endpoint.',
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { description: 'Serve the page and the explain endpoint.', type: 'boolean', default: true },
    root: { description: 'Directory of the built page (default: dist/playground of this installation).', type: 'string', minLength: 1, pattern: '\\S' },
  },
} as const;

const agrees: Agrees<typeof playgroundSchema, PlaygroundSection> = true;
void agrees;

export const playgroundValidator = compileSchema(playgroundSchema);
export const playgroundWording: Wording = { pattern: () => 'must be a directory path' };

export function parsePlaygroundSection(section: unknown): PlaygroundSection {
  const s = checkSection<PlaygroundSection>(playgroundValidator, section, ['playground'], playgroundWording);
  return { enabled: s.enabled, ...(s.root !== undefined ? { root: resolve(s.root) } : {}) };
}
