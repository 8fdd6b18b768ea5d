// Where the agents' non-TypeScript sources live: the package's top-level agents/ folder, which
// ships with it. This file sits at src/agents/ and, compiled, at dist/agents/: the same two
// levels below the package root either way.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A path inside the package's agents/ folder. */
export function agentResource(...parts: string[]): string {
  return join(packageRoot, 'agents', ...parts);
}

/** The version every agent reports (`agentVersion`): the package's own. */
export function agentVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}
