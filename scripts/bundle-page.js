// Bundles one browser page of the project (the playground, the web app) into static files the
// server serves: app.js (the page's code with everything it imports, the project's own query
// parser and completion included, so the browser and the server share one grammar), app.css and
// index.html. The page must work without any network beyond the server: everything is bundled,
// nothing is loaded from elsewhere at run time.
//
// Each page's build.js calls bundlePage with its directory, and runs it from the command line:
//   node <page>/build.js [--outdir DIR] [--no-minify]
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * Builds the page in `dir` (src/main.ts, styles.css, index.html) into `outdir`.
 * @param {string} dir the page's directory
 * @param {{ outdir: string, minify?: boolean }} options
 */
export async function bundlePage(dir, options) {
  const outdir = resolve(root, options.outdir);
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [
      { in: join(dir, 'src/main.ts'), out: 'app' },
      { in: join(dir, 'styles.css'), out: 'app' },
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
  await copyFile(join(dir, 'index.html'), join(outdir, 'index.html'));
  return outdir;
}

/**
 * Runs `buildIt` when `moduleUrl` is the script node was started with: `--outdir DIR`,
 * `--no-minify`; prints where the page went, or the error in one line (exit 1).
 * @param {string} moduleUrl
 * @param {string} name
 * @param {(options: { outdir?: string, minify: boolean }) => Promise<string>} buildIt
 */
export function runIfMain(moduleUrl, name, buildIt) {
  if (process.argv[1] === undefined || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 ? args[at + 1] : undefined;
  buildIt({ ...(outdir !== undefined ? { outdir } : {}), minify: !args.includes('--no-minify') }).then(
    (dir) => console.log(`${name} built into ${dir}`),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
