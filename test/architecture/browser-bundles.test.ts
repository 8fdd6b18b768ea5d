// What the two browser pages ship: of the server's code, only the query package (the search
// language runs in the page); the web app and the playground share ui/ and hold nothing of each
// other. Checked on the bundles esbuild makes, where `import type` is erased: the layer rules
// (.dependency-cruiser.cjs) see imports before that, and their parser does not tell type imports
// apart.

import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** The repository's files esbuild bundled for a page's script and stylesheet (node_modules left out). */
async function inputsOf(page: 'web' | 'playground'): Promise<string[]> {
  const result = await build({
    entryPoints: [`${page}/src/main.ts`, `${page}/styles.css`],
    outdir: 'out',
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/'));
}

describe('browser bundles', () => {
  for (const [page, other] of [
    ['web', 'playground'],
    ['playground', 'web'],
  ] as const) {
    it(`the ${page} bundle holds of the server only the query package, and nothing of the ${other}`, async () => {
      const inputs = await inputsOf(page);
      expect(inputs.some((f) => f.startsWith(`${page}/`))).toBe(true);
      expect(inputs.some((f) => f.startsWith('ui/'))).toBe(true);
      expect(inputs.some((f) => f.startsWith('src/query/'))).toBe(true);
      expect(inputs.filter((f) => f.startsWith('src/') && !f.startsWith('src/query/'))).toEqual([]);
      expect(inputs.filter((f) => f.startsWith(`${other}/`))).toEqual([]);
      expect(inputs.filter((f) => !/^(web|playground|ui|src)\//.test(f))).toEqual([]);
    }, 60_000);
  }
});
