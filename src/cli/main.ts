// The `buildscope` command line. Each sub-command lives in src/cli/commands/<name>.ts and exports
// `register(program)`; they are discovered here so that adding a command touches one file.
// Command modules keep their top-level imports light and load heavy code inside their actions.

import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';

const here = dirname(fileURLToPath(import.meta.url));

export async function main(argv: readonly string[]): Promise<void> {
  const program = new Command('buildscope')
    .description('Buildscope: build analytics server, advanced build search, export, provenance and build cache node.')
    .showHelpAfterError();
  const dir = join(here, 'commands');
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`) && !f.startsWith('_'))
    .sort();
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { register?: (p: Command) => void };
    mod.register?.(program);
  }
  await program.parseAsync([...argv], { from: 'user' });
}
