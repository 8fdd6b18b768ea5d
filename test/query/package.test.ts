import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const built = existsSync(new URL('dist/testing/index.js', root)) && existsSync(new URL('dist/index.js', root));

// `npm test` builds first; run alone, this needs `npm run build`.
describe.skipIf(!built)('the package exports', () => {
  it('`buildscope` and `buildscope/testing` resolve and work together', () => {
    const script = `
      const { parseQuery, formatQuery } = await import('buildscope');
      const { validQuery } = await import('buildscope/testing');
      const { default: fc } = await import('fast-check');
      const now = Date.now();
      const ok = fc.sample(validQuery({ now }), 200).every((q) => parseQuery(q, { now }).ok);
      console.log(JSON.stringify({ ok, canonical: formatQuery(parseQuery('BUILDOUTCOME:failed').expr) }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ ok: true, canonical: 'buildOutcome:failed' });
  });
});
