#!/usr/bin/env node
// Bundles the web app (the builds list, build and trends pages) into static files the server
// serves at /web/: app.js (the pages' code with CodeMirror, the project's own query parser and
// completion, and Chart.js), app.css and index.html. Nothing is loaded from elsewhere at run time.
//
// Usage: node web/build.js [--outdir DIR] [--no-minify]
// scripts/build.js runs it after tsc, so `npm install`, `npm start` and `npm test` build it.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');

/**
 * Builds the web app into `outdir` (default dist/web).
 * @param {{ outdir?: string, minify?: boolean }} [options]
 */
export async function buildWeb(options = {}) {
  const outdir = resolve(root, options.outdir ?? 'dist/web');
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [
      { in: join(here, 'src/main.ts'), out: 'app' },
      { in: join(here, 'styles.css'), out: 'app' },
    ],
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: options.minify ?? true,
    sourcemap: true,
    legalComments: 'linked',
    logLevel: 'warning',
    external: [],
  });
  await copyFile(join(here, 'index.html'), join(outdir, 'index.html'));
  return outdir;
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 ? args[at + 1] : undefined;
  buildWeb({ outdir, minify: !args.includes('--no-minify') }).then(
    (dir) => console.log(`web app built into ${dir}`),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
