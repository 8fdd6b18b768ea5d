// GET /api/builds, GET /api/builds/{id}, POST /api/builds, GET /api/version over real HTTP, on
// SQLite and PostgreSQL.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAvailable } from '../support/postgres.js';
import { bearer, buildId, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';
import { waitFor } from '../support/wait.js';

const SUMMARY_KEYS = ['availableAt', 'buildAgentVersion', 'buildToolType', 'buildToolVersion', 'id'];
const T0 = 1_750_000_000_000;

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`build API on ${dialect}`, () => {
    let s: TestServer;
    let admin: string;
    let operator: string;
    let reader: string;
    const ids = Array.from({ length: 12 }, (_, i) => buildId(i + 1));
    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      admin = await s.user('admin', ['accessBuildDataViaApi', 'publishScan']);
      operator = await s.user('operator', ['readMetrics']);
      reader = await s.user('reader', ['accessBuildDataViaApi']);
      // 12 builds, one ingest call each, 1 s apart on the store clock: b1..b12.
      for (let i = 0; i < ids.length; i++) {
        s.storeNow = T0 + i * 1000;
        const project = i % 3 === 0 ? 'app' : i % 3 === 1 ? 'lib' : undefined;
        const r = await s.ingest(
          [buildLine({ id: ids[i]!, tool: i % 2 === 0 ? 'native' : 'jvmbuild', outcome: i % 4 === 0 ? 'failed' : 'succeeded', tags: ['ci'], ...(project ? { project } : {}) })],
          bearer(admin),
        );
        expect(r.status).toBe(200);
      }
    });
    afterAll(() => s?.close());

    // These listings read the whole history unless they name where to start (since=0): without a
    // start a listing begins at the time of the request (tested on its own below).
    const withStart = (query: string) =>
      /[?&](since|fromInstant|fromBuild|sinceBuild|reverse)=/.test(query) ? query : `${query}${query.includes('?') ? '&' : '?'}since=0`;
    const list = async (query: string, credential = admin) => listRaw(withStart(query), credential);
    const listRaw = async (query: string, credential = admin) => {
      const r = await s.get(`/api/builds${query}`, bearer(credential));
      return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.json()) as any };
    };
    /**
     * A listing started now, once the server says it is waiting (the metric of the requests waiting
     * for a new build: it looked and found none) and it has not answered: a build stored after
     * this resolves is one the poll waited for, never one it found at its start.
     */
    const waitingList = async (query: string) => {
      const gauge = async () => {
        const r = await s.get('/metrics', bearer(operator));
        expect(r.status).toBe(200);
        return Number(/^buildscope_new_build_waiters (\d+)/m.exec(await r.text())?.[1] ?? 0);
      };
      const before = await gauge();
      let settled = false;
      const result = listRaw(query).finally(() => (settled = true));
      await waitFor(async () => {
        expect(settled, 'the listing answered without waiting').toBe(false);
        return (await gauge()) > before;
      }, 'the listing to wait for a new build (buildscope_new_build_waiters)', 20_000, 10);
      expect(settled, 'the listing answered without waiting').toBe(false);
      return { done: result };
    };

    it('since=0&maxBuilds=3 gives the three oldest, oldest first, with exactly the summary fields', async () => {
      const r = await list('?since=0&maxBuilds=3');
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/^application\/json/);
      expect(r.body.map((b: any) => b.id)).toEqual(ids.slice(0, 3));
      for (const b of r.body) expect(Object.keys(b).sort()).toEqual(SUMMARY_KEYS);
      expect(r.body[0]).toEqual({ id: ids[0], availableAt: T0, buildToolType: 'native', buildToolVersion: '8.10.2', buildAgentVersion: '3.19' });
    });

    it('defaults to 100 builds and accepts maxBuilds 0..1000 only', async () => {
      expect((await list('')).body).toHaveLength(12);
      expect((await list('?maxBuilds=0')).body).toEqual([]);
      expect((await list('?maxBuilds=1000')).body).toHaveLength(12);
      for (const q of ['?maxBuilds=1001', '?maxBuilds=-1', '?maxBuilds=abc', '?maxBuilds=1.5', '?since=-5', '?since=x', '?since=9223372036854776000', '?fromInstant=9007199254740992',
        '?since=-Infinity', '?since=Infinity', '?since=1e400', '?fromInstant=-Infinity', '?fromInstant=Infinity', '?maxBuilds=Infinity', '?maxWaitSecs=1e400', '?since=NaN']) {
        const r = await list(q);
        expect(r.status, q).toBe(400);
        expect(r.type).toMatch(/^application\/problem\+json/);
        expect(r.body).toMatchObject({ type: 'urn:buildscope:problem:invalid-parameter', title: 'Bad Request', status: 400 });
        expect(r.body.detail).toMatch(/maxBuilds|maxWaitSecs|since|fromInstant/);
      }
    });

    it('starts after since/fromInstant (exclusive) and after fromBuild (exclusive, taking precedence)', async () => {
      expect((await list(`?since=${T0 + 10_000}`)).body.map((b: any) => b.id)).toEqual(ids.slice(11));
      expect((await list(`?since=${T0 + 9_999}`)).body.map((b: any) => b.id)).toEqual(ids.slice(10));
      expect((await list(`?fromInstant=${T0 + 9_000}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(10, 12));
      expect((await list(`?fromBuild=${ids[3]}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(4, 6));
      expect((await list(`?fromBuild=${ids[3]}&fromInstant=${T0 + 10_000}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(4, 6));
      const unknown = await list('?fromBuild=zzzzzzzzzzzzz');
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail).toMatch(/fromBuild/);
    });

    it('lists newest first with reverse=true', async () => {
      expect((await list('?reverse=true&maxBuilds=3')).body.map((b: any) => b.id)).toEqual([ids[11], ids[10], ids[9]]);
      expect((await list(`?reverse=true&fromBuild=${ids[3]}`)).body.map((b: any) => b.id)).toEqual([ids[2], ids[1], ids[0]]);
    });

    it('filters with the advanced search query', async () => {
      const failed = (await list(`?query=${encodeURIComponent('buildOutcome:failed')}`)).body.map((b: any) => b.id);
      expect(failed).toEqual([ids[0], ids[4], ids[8]]);
      const r = await list(`?query=${encodeURIComponent('buildTool:jvmbuild and project:app')}`);
      expect(r.body.map((b: any) => b.id)).toEqual([ids[3], ids[9]]);
      expect((await list('?query=')).body).toHaveLength(12);
    });

    it('refuses NUL characters in queries and in ingested text with a clear error, not a server error', async () => {
      // NUL cannot stand in PostgreSQL text and ends an FTS5 query string: it never reaches the database.
      for (const q of ['user:*\u0000:-5d', 'user:*ab\u0000cd*', 'user:a\u0000b', 'project:\u0000*', 'value:"k=\u0000v"', 'tag:*\u0000\u0000\u0000*']) {
        const r = await list(`?query=${encodeURIComponent(q)}`);
        expect(r.status, JSON.stringify(q)).toBe(400);
        expect(r.body.detail, JSON.stringify(q)).toMatch(/NUL/);
        expect(r.body.diagnostics[0].start, JSON.stringify(q)).toBe(q.indexOf('\u0000'));
      }
      const id = buildId(3000);
      const r = (await (await s.ingest([buildLine({ id, project: 'a\u0000b' }), buildLine({ id: buildId(3001), tags: ['x\u0000'] })], bearer(admin))).json()) as any;
      expect(r).toMatchObject({ stored: 0, rejected: 2 });
      expect(r.results[0].error).toMatch(/NUL/);
      expect(r.results[0].path).toBe('$.events[2].data.rootProjectName');
      expect(r.results[1].path).toBe('$.events[2].data.tag');
      expect((await s.get(`/api/builds/${id}`, bearer(admin))).status).toBe(404);
    });

    it('answers a query with errors with 400, saying what and where, with the diagnostics', async () => {
      const r = await list(`?query=${encodeURIComponent('buildOutcom:failed')}`);
      expect(r.status).toBe(400);
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body.detail).toMatch(/line 1, column 1/);
      expect(r.body.detail).toMatch(/buildOutcom/);
      // The suggestion is said once, in plain sentences.
      expect(r.body.detail.match(/did you mean 'buildOutcome'/gi)).toHaveLength(1);
      expect(r.body.detail).not.toMatch(/\?\./);
      expect(r.body.diagnostics[0]).toMatchObject({ code: 'unknownField', start: 0, line: 1, column: 1 });
      expect(r.body.diagnostics[0].suggestion).toBe('buildOutcome');
      const r2 = await list(`?query=${encodeURIComponent('buildOutcome:failed (')}`);
      expect(r2.status).toBe(400);
      expect(r2.body.diagnostics.length).toBeGreaterThan(0);
      expect(r2.body.diagnostics[0].start).toBeGreaterThanOrEqual(19);
    });

    it('includes derived attributes with models=attributes', async () => {
      const r = await list('?maxBuilds=1&models=attributes');
      expect(Object.keys(r.body[0]).sort()).toEqual([...SUMMARY_KEYS, 'attributes'].sort());
      expect(r.body[0].attributes).toMatchObject({ buildOutcome: 'failed', project: 'app', buildTool: 'native', tag: ['ci'] });
      expect((await list('?models=attributes,bogus')).status).toBe(400);
    });

    it('needs accessBuildDataViaApi', async () => {
      const publisher = await s.user('publisher', ['publishScan']);
      const r = await list('', publisher);
      expect(r.status).toBe(403);
      expect(r.body.detail).toMatch(/accessBuildDataViaApi/);
      expect(r.body).not.toHaveProperty('0');
    });

    it('honours project-level access control', async () => {
      const appOnly = await s.user('appuser', ['accessBuildDataViaApi'], { projects: ['app'] });
      expect((await list('', appOnly)).body.map((b: any) => b.id)).toEqual([ids[0], ids[3], ids[6], ids[9]]);
      const appAndNone = await s.user('appnone', ['accessBuildDataViaApi', 'accessDataWithoutAssociatedProject'], { projects: ['app'] });
      expect((await list('', appAndNone)).body.map((b: any) => b.id)).toEqual(ids.filter((_, i) => i % 3 !== 1));
      // A token for project lib only, of a user who may see app and lib.
      const both = await s.user('both', ['accessBuildDataViaApi'], { projects: ['app', 'lib'] });
      const libToken = await s.token(both, '?projectIds=lib');
      expect((await list('', libToken)).body.map((b: any) => b.id)).toEqual([ids[1], ids[4], ids[7], ids[10]]);
      expect((await s.get(`/api/builds/${ids[0]}`, bearer(libToken))).status).toBe(404);
      expect((await s.get(`/api/builds/${ids[1]}`, bearer(libToken))).status).toBe(200);
    });

    it('GET /api/builds/{id} answers one summary, with attributes on request, and 404 for unknown IDs', async () => {
      const r = await s.get(`/api/builds/${ids[4]}`, bearer(reader));
      expect(await r.json()).toEqual({ id: ids[4], availableAt: T0 + 4000, buildToolType: 'native', buildToolVersion: '8.10.2', buildAgentVersion: '3.19' });
      const a = (await (await s.get(`/api/builds/${ids[4]}?models=attributes`, bearer(reader))).json()) as any;
      expect(a.attributes.project).toBe('lib');
      const missing = await s.get('/api/builds/nosuchbuild00', bearer(reader));
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it('waits up to maxWaitSecs for a new build when none is available, also from another server process', async () => {
      const other = await s.sibling();
      try {
        s.storeNow = T0 + 100_000;
        const started = Date.now();
        const { done: waiting } = await waitingList(`?fromBuild=${ids[11]}&maxWaitSecs=10`);
        const fresh = buildId(1000);
        expect((await other.ingest([buildLine({ id: fresh })], bearer(admin))).status).toBe(200);
        const r = await waiting;
        expect(r.body.map((b: any) => b.id)).toEqual([fresh]);
        expect(Date.now() - started).toBeLessThan(8000);
      } finally {
        await other.close();
      }
      const t = Date.now();
      const empty = await list(`?fromBuild=${buildId(1000)}&maxWaitSecs=1`);
      expect(empty.body).toEqual([]);
      expect(Date.now() - t).toBeGreaterThanOrEqual(900);
      for (const q of ['?maxWaitSecs=0', '?maxWaitSecs=21']) expect((await list(q)).status, q).toBe(400);
    });

    it('POST /api/builds ingests NDJSON with per-line results and appends to unfinished builds', async () => {
      s.storeNow = T0 + 200_000;
      const id = buildId(2000);
      const r = await fetch(`${s.url}/api/builds`, {
        method: 'POST',
        headers: { authorization: bearer(admin), 'content-type': 'application/x-ndjson' },
        body: `${buildLine({ id, finished: false })}\nnot json\n\n${buildLine({ id: buildId(2001) })}\n`,
      });
      expect(r.status).toBe(200);
      const body = (await r.json()) as any;
      expect(body).toMatchObject({ stored: 2, rejected: 1, unchanged: 0 });
      expect(body.results[0]).toMatchObject({ line: 1, status: 'stored', buildId: id, complete: false });
      expect(body.results[1]).toMatchObject({ line: 2, status: 'rejected' });
      expect(typeof body.results[1].error).toBe('string');
      // Still being stored: 503 with Retry-After (as the export API answers), not a 404.
      const pending = await s.get(`/api/builds/${id}`, bearer(admin));
      expect(pending.status).toBe(503);
      expect(pending.headers.get('retry-after')).toBe('5');
      expect(pending.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await pending.json()) as any).detail).toMatch(/still being stored/);
      const finish = JSON.stringify({
        buildId: id,
        toolType: 'native',
        toolVersion: '8.10.2',
        agentVersion: '3.19',
        events: [{ timestamp: 1_749_000_060_000, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildFinished' }, data: { outcome: 'succeeded', failures: [] } }],
      });
      const r2 = (await (await s.ingest([finish], bearer(admin))).json()) as any;
      expect(r2.results[0]).toMatchObject({ status: 'stored', complete: true });
      expect((await s.get(`/api/builds/${id}`, bearer(admin))).status).toBe(200);
      // The same content again changes nothing.
      expect(((await (await s.ingest([buildLine({ id: buildId(2001) })], bearer(admin))).json()) as any).unchanged).toBe(1);
    });

    it('POST /api/builds needs publishScan and an NDJSON body', async () => {
      const r = await s.ingest([buildLine({ id: buildId(3000) })], bearer(reader));
      expect(r.status).toBe(403);
      const wrongType = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { authorization: bearer(admin), 'content-type': 'application/json' }, body: '{}' });
      expect(wrongType.status).toBe(415);
      expect(wrongType.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const noBody = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { authorization: bearer(admin) } });
      expect([400, 415]).toContain(noBody.status);
      expect((await s.get(`/api/builds/${buildId(3000)}`, bearer(admin))).status).toBe(404);
    });

    it('GET /api/version answers the release; unknown paths answer a 404 problem', async () => {
      const v = await fetch(`${s.url}/api/version`);
      const version = (await v.json()) as any;
      expect(version).toMatchObject({ product: 'buildscope', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      // The public REST API's shape: {string, year, release, patch}, numbers from the string.
      expect(version.string).toBe(version.version);
      expect([version.year, version.release, version.patch]).toEqual(version.string.split(/[.+-]/).slice(0, 3).map(Number));
      expect(await (await fetch(`${s.url}/`)).json()).toMatchObject({ builds: '/api/builds', openapi: '/api/openapi.json' });
      const nf = await fetch(`${s.url}/api/nothing-here`);
      expect(nf.status).toBe(404);
      expect(await nf.json()).toMatchObject({ type: 'urn:buildscope:problem:not-found', title: 'Not Found', status: 404 });
    });

    it('refuses a NUL in a build ID with 400, never a server error', async () => {
      for (const path of ['/api/builds/%00', `/api/builds/${ids[0]}%00`, '/api/builds?fromBuild=a%00', '/api/builds?sinceBuild=a%00']) {
        const r = await s.get(path, bearer(reader));
        expect(r.status, path).toBe(400);
        expect(r.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
        expect(((await r.json()) as any).detail, path).toMatch(/NUL/);
      }
    });

    it('reverse has no effect with since; with fromInstant it lists the builds before the instant, newest first', async () => {
      expect((await listRaw(`?since=${T0 + 8_000}&reverse=true&maxBuilds=3`)).body.map((b: any) => b.id)).toEqual(ids.slice(9, 12));
      // (A sibling server stored one build at T0 on its own store clock earlier in this file.)
      expect((await listRaw(`?fromInstant=${T0 + 3_000}&reverse=true`)).body.map((b: any) => b.id).filter((id: string) => ids.includes(id))).toEqual([ids[2], ids[1], ids[0]]);
      expect((await listRaw(`?fromInstant=${T0 + 3_000}&reverse=true`)).body.map((b: any) => b.id)).not.toContain(ids[3]);
      expect((await listRaw(`?fromInstant=0&reverse=true`)).body).toEqual([]);
      // fromInstant wins over since.
      expect((await listRaw(`?since=${T0 + 10_000}&fromInstant=${T0 + 2_000}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(3, 5));
    });

    it('honours sinceBuild, the deprecated alias of fromBuild (fromBuild wins when both are given)', async () => {
      expect((await listRaw(`?sinceBuild=${ids[3]}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(4, 6));
      expect((await listRaw(`?sinceBuild=${ids[3]}&fromBuild=${ids[7]}&maxBuilds=2`)).body.map((b: any) => b.id)).toEqual(ids.slice(8, 10));
      const unknown = await listRaw('?sinceBuild=zzzzzzzzzzzzz');
      expect(unknown.status).toBe(400);
    });

    it('without since, fromInstant or fromBuild lists from the time of the request: only builds stored after it', async () => {
      const t = Date.now();
      const none = await listRaw('?maxWaitSecs=1');
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
      expect(Date.now() - t).toBeGreaterThanOrEqual(900);
      const { done: waiting } = await waitingList('?maxWaitSecs=10');
      s.storeNow = T0 + 500_000;
      const fresh = buildId(5000);
      expect((await s.ingest([buildLine({ id: fresh })], bearer(admin))).status).toBe(200);
      expect((await waiting).body.map((b: any) => b.id)).toEqual([fresh]);
      // reverse=true without a start lists back from the newest build.
      expect((await listRaw('?reverse=true&maxBuilds=1')).body.map((b: any) => b.id)).toEqual([fresh]);
      // since=0 is still the whole history.
      expect((await listRaw('?since=0&maxBuilds=1')).body.map((b: any) => b.id)).toEqual([ids[0]]);
    });
  });
}
