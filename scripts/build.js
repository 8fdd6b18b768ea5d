#!/usr/bin/env node
// Builds the library and CLI into dist/ (tsc), the playground into dist/playground and the web
// app into dist/web (esbuild).
// Runs on `npm install` (prepare) so that `npx buildscope` and `npm start` work from a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// TypeScript 7 does not export `bin/tsc`; find it next to its package.json.
const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
if (existsSync('playground/build.js')) {
  const p = spawnSync(process.execPath, ['playground/build.js'], { stdio: 'inherit' });
  if (p.status !== 0) process.exit(p.status ?? 1);
}
if (existsSync('web/build.js')) {
  const w = spawnSync(process.execPath, ['web/build.js'], { stdio: 'inherit' });
  if (w.status !== 0) process.exit(w.status ?? 1);
}
