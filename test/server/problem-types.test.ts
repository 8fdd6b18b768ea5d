// Problem documents carry a stable, machine-readable `type` per kind of problem, a URN in
// Buildscope's own namespace; every kind is documented. (The provenance service keeps
// `about:blank`, as its seed says: see test/provenance/http.test.ts.)
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_KINDS } from '../../src/http/problem.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { bearer, buildId, buildLine, newLocation, startTestServer, type TestServer } from './support.js';

describe('problem types', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin] });
    key = await s.user('admin', ['accessBuildDataViaApi', 'publishScan', 'exportData']);
    await s.ingest([buildLine({ id: buildId(1), finished: false })], bearer(key));
  });
  afterAll(() => s?.close());

  it('names the kind of each problem with a urn:buildscope:problem: URN', async () => {
    const cases: [string, RequestInit & { path: string }, number, string][] = [
      ['unknown field in a query', { path: `/api/builds?query=${encodeURIComponent('buildOutcom:failed')}` }, 400, 'invalid-query'],
      ['out-of-range parameter', { path: '/api/builds?maxBuilds=5000' }, 400, 'invalid-parameter'],
      ['parameter of the wrong type', { path: '/api/builds?since=abc' }, 400, 'invalid-parameter'],
      ['no credentials', { path: '/api/builds', headers: {} }, 401, 'unauthorized'],
      ['unknown build', { path: `/api/builds/${buildId(2)}` }, 404, 'not-found'],
      ['unknown path', { path: '/api/nothing' }, 404, 'not-found'],
      ['build still being stored', { path: `/api/builds/${buildId(1)}` }, 503, 'build-not-ready'],
      ['export: query that does not parse', { path: `/build-export/v2/builds/since/0?query=${encodeURIComponent('(')}` }, 400, 'invalid-query'],
      ['export: date in the future', { path: '/build-export/v2/builds/since/99999999999999' }, 400, 'invalid-parameter'],
      ['export: build still being stored', { path: `/build-export/v2/build/${buildId(1)}/events` }, 503, 'build-not-ready'],
      ['ingest: wrong content type', { path: '/api/builds', method: 'POST', headers: { authorization: bearer(key), 'content-type': 'text/csv' }, body: 'x' }, 415, 'unsupported-media-type'],
      ['token: permission the credential lacks', { path: '/api/auth/token?permissions=manageCacheNodes', method: 'POST' }, 403, 'forbidden'],
    ];
    for (const [name, { path, ...init }, status, kind] of cases) {
      const r = await fetch(s.url + path, { headers: { authorization: bearer(key) }, ...init });
      expect(r.status, name).toBe(status);
      expect(r.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      const p = (await r.json()) as { type: string };
      expect(p.type, name).toBe(`urn:buildscope:problem:${kind}`);
    }
  });

  it('documents every kind in docs/server.md', () => {
    const doc = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');
    for (const kind of PROBLEM_KINDS) expect(doc, kind).toContain(`\`urn:buildscope:problem:${kind}\``);
  });
});
