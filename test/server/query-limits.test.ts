// Queries that could hold the server, over real HTTP on SQLite and PostgreSQL: a query over the
// complexity limit answers 400 with the diagnostics (about 1,000 terms used to be a 500 on
// SQLite, "Expression tree is too large"), and a search over the time limit answers 503 with a
// problem document saying so, while the server keeps answering.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { pgAvailable } from '../support/postgres.js';
import { bearer, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

const terms = (n: number): string => Array.from({ length: n }, (_, i) => `-tag:t${i}`).join(' ');

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`query limits over HTTP on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    beforeAll(async () => {
      // A search time limit of 1 ms: every search over a few hundred builds runs into it.
      s = await startTestServer(await newLocation(dialect), { raw: { limits: { searchTimeoutMs: 1 } }, plugins: [exportPlugin] });
      key = await s.user('reader', ['accessBuildDataViaApi', 'exportData']);
      await s.store.ingestNdjson([...demoBuilds({ builds: 400, seed: 11, now: s.storeNow })].join('\n'));
    }, 60_000);
    afterAll(() => s?.close());

    const list = async (query: string) => {
      const r = await s.get(`/api/builds?since=0&maxBuilds=1000&query=${encodeURIComponent(query)}`, bearer(key));
      return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.json()) as any };
    };

    it('answers 1,000 terms with 400 and a tooComplex diagnostic at the first term over the limit', async () => {
      const text = terms(1000);
      const r = await list(text);
      expect(r.status).toBe(400);
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body.detail).toMatch(/1000 terms; at most 100 are allowed/);
      expect(r.body.diagnostics).toHaveLength(1);
      expect(r.body.diagnostics[0]).toMatchObject({ code: 'tooComplex', start: text.indexOf('tag:t100 '), line: 1 });
    });

    it('answers 1,000 terms on the export API with 400 and the diagnostics (they took 40 s there)', async () => {
      const r = await s.get(`/build-export/v2/builds/since/0?stream&query=${encodeURIComponent(terms(1000))}`, bearer(key));
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await r.json()) as any;
      expect(body.diagnostics.map((d: { code: string }) => d.code)).toEqual(['tooComplex']);
    });

    it('answers a search over the time limit with 503 and a problem document, and keeps serving', async () => {
      const r = await list(terms(100));
      expect(r.status).toBe(503);
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body.detail).toMatch(/longer than the server's limit of 1 ms and was stopped; narrow the query/);
      // A listing without a query is no search and has no time limit.
      const plain = await s.get('/api/builds?since=0&maxBuilds=5', bearer(key));
      expect(plain.status).toBe(200);
      expect(await plain.json()).toHaveLength(5);
    });
  });
}
