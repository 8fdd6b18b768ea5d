// The compiled command (bin/buildscope.js over dist/), as the tests run it: `npm test` builds dist/
// first; a run of some test files alone (`npx vitest run <file>`) rebuilds it here when a source is
// newer than the build, so that the command the tests run is the current code.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { waitFor } from './wait.js';

const root = join(import.meta.dirname, '..', '..');

/** The newest modification time of the files under `dir` (ending with `suffix`), 0 when none. */
function newest(dir: string, suffix = ''): number {
  let latest = 0;
  if (!existsSync(dir)) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(suffix)) continue;
    try {
      latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    } catch {
      // Removed while listed.
    }
  }
  return latest;
}

function isStale(): boolean {
  return !existsSync(join(root, 'dist', 'cli', 'main.js')) || newest(join(root, 'src')) > newest(join(root, 'dist'), '.js');
}

/**
 * Compiles src/ (tsc -p tsconfig.json, as scripts/build.js does) into a temp directory beside
 * dist/, then renames each file into dist/: a command another test run starts meanwhile reads
 * either the old or the new file, never half of one. One rebuild at a time (a lock directory).
 */
export async function rebuildDistIfStale(): Promise<void> {
  if (!isStale()) return;
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const lock = join(cache, 'buildscope-dist.lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another run is building: wait for it (or for its lock to be left for 10 minutes), then look again.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Gone meanwhile.
      }
      await waitFor(() => !existsSync(lock), 'another test run to finish building dist/', 600_000, 200);
      if (!isStale()) return;
    }
  }
  const out = join(cache, `buildscope-dist-${process.pid}`);
  try {
    const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', out], { cwd: root, encoding: 'utf8' });
    // tsc writes the output even with type errors; those fail the type check of `npm test`, not the tests.
    if (r.status !== 0) process.stderr.write(`dist/ rebuilt with errors from tsc:\n${r.stdout}${r.stderr}`);
    if (!existsSync(join(out, 'cli', 'main.js'))) throw new Error(`tsc did not build the CLI: ${r.stdout}${r.stderr}`);
    for (const entry of readdirSync(out, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const from = join(entry.parentPath, entry.name);
      const to = join(root, 'dist', relative(out, from));
      mkdirSync(dirname(to), { recursive: true });
      renameSync(from, to);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
}

/** node arguments that run the `buildscope` command (absolute, so that any working directory works). */
export const CLI: readonly string[] = [join(root, 'bin', 'buildscope.js')];
