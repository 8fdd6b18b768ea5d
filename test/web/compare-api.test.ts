// GET /api/builds/{a}/compare/{b} over real HTTP on SQLite and PostgreSQL: the comparison of a
// passing and a failing build, project isolation (a build of another project answers exactly as
// an unknown ID), the permission, and problem documents for every bad input (never a 500).

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Comparison } from '../../src/services/compare.js';
import { pgAvailable } from '../support/postgres.js';
import { bearer, newLocation, startTestServer, type Dialect, type TestServer } from '../support/server.js';
import { buildLine, passingAndFailing } from '../services/compare-fixtures.js';

const T0 = Date.UTC(2026, 5, 1, 8);

for (const dialect of ['sqlite', 'postgres'] as const satisfies readonly Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`compare route on ${dialect}`, () => {
    let s: TestServer;
    let alice: string;
    let bob: string;
    let carol: string;

    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      const shop = passingAndFailing('shop', { pass: 'shoppass00001', fail: 'shopfail00001' }, T0);
      const other = passingAndFailing('inventory', { pass: 'invpass000001', fail: 'invfail000001' }, T0);
      const unfinished = buildLine({ id: 'unfinished001', start: T0, project: 'shop', outcome: 'succeeded', unfinished: true });
      const results = await s.store.ingestNdjson([shop.pass, shop.fail, other.pass, other.fail, unfinished].join('\n'));
      expect(results.filter((r) => r.status !== 'stored')).toEqual([]);
      alice = bearer(await s.user('alice', ['accessBuildDataViaApi']));
      bob = bearer(await s.user('bob', ['accessBuildDataViaApi'], { projects: ['inventory'] }));
      carol = bearer(await s.user('carol', ['publishScan']));
    });

    afterAll(async () => {
      await s?.close();
    });

    const problem = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      return (await res.json()) as { type: string; title: string; status: number; detail: string };
    };

    it('compares a passing and a failing build: the summary names the failing test first after the outcome', async () => {
      const res = await s.get('/api/builds/shoppass00001/compare/shopfail00001', alice);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const c = (await res.json()) as Comparison;
      expect([c.a.id, c.b.id, c.a.outcome, c.b.outcome]).toEqual(['shoppass00001', 'shopfail00001', 'succeeded', 'failed']);
      expect(c.summary.slice(0, 3).map((e) => e.reason)).toEqual(['outcome', 'failing-task', 'failing-test']);
      expect(c.summary[2]!.difference).toEqual({ kind: 'test-outcome', suite: 'acme.PriceTest', name: 'roundsHalfCents', before: 'passed', after: 'failed' });
      const back = (await (await s.get('/api/builds/shopfail00001/compare/shoppass00001', alice)).json()) as Comparison;
      expect(back.summary[2]!.difference).toEqual({ kind: 'test-outcome', suite: 'acme.PriceTest', name: 'roundsHalfCents', before: 'failed', after: 'passed' });
    });

    it('answers as its OpenAPI document says, every kind of difference the fixtures make included', async () => {
      const doc = (await (await s.get('/api/openapi.json')).json()) as { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: object }> }> } }> };
      const validate = new Ajv2020({ strict: false, allErrors: true }).compile(doc.paths['/api/builds/{a}/compare/{b}']!.get.responses['200']!.content['application/json']!.schema);
      for (const [a, b] of [['shoppass00001', 'shopfail00001'], ['shopfail00001', 'shoppass00001']]) {
        const c = (await (await s.get(`/api/builds/${a}/compare/${b}`, alice)).json()) as Comparison;
        expect(c.sections.flatMap((x) => x.differences).map((d) => d.kind)).toContain('task-inputs');
        expect(c.summary.map((e) => e.reason)).toContain('cache-miss');
        validate(c);
        expect(validate.errors ?? []).toEqual([]);
      }
    });

    it('a build compared with itself is identical', async () => {
      const c = (await (await s.get('/api/builds/invfail000001/compare/invfail000001', bob)).json()) as Comparison;
      expect(c.identical).toBe(true);
      expect(c.summary).toEqual([]);
    });

    it('a build of another project answers exactly as an unknown ID', async () => {
      const invisible = await problem(await s.get('/api/builds/invpass000001/compare/shopfail00001', bob), 404);
      const unknown = await problem(await s.get('/api/builds/invpass000001/compare/zzzzzzzzzzzzz', bob), 404);
      expect(invisible.type).toBe('urn:buildscope:problem:not-found');
      expect({ ...invisible, detail: invisible.detail.replace('shopfail00001', 'ID') }).toEqual({ ...unknown, detail: unknown.detail.replace('zzzzzzzzzzzzz', 'ID') });
      expect((await s.get('/api/builds/invpass000001/compare/invfail000001', bob)).status).toBe(200);
    });

    it('asks for the same permission as GET /api/builds/{id}', async () => {
      await problem(await s.get('/api/builds/shoppass00001/compare/shopfail00001'), 401);
      await problem(await s.get('/api/builds/shoppass00001/compare/shopfail00001', carol), 403);
    });

    it('answers bad input and builds being stored with problem documents, never a 500', async () => {
      expect((await problem(await s.get('/api/builds/shoppass00001/compare/unfinished001', alice), 503)).type).toBe('urn:buildscope:problem:build-not-ready');
      expect((await problem(await s.get(`/api/builds/${'x'.repeat(201)}/compare/shopfail00001`, alice), 400)).type).toMatch(/invalid-parameter|bad-request/);
      await problem(await s.get('/api/builds/shop%00pass/compare/shopfail00001', alice), 400);
      for (const id of ['%20', '..', "a'b", 'ümlaut', '%25', 'a%2Fb', '-1', 'null']) {
        const res = await s.get(`/api/builds/${id}/compare/shopfail00001`, alice);
        expect([400, 404], `${id}: ${res.status}`).toContain(res.status);
        await res.body?.cancel();
      }
    });
  });
}
