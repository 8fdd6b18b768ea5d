// GET /api/tests, GET /api/tests/{testId}/history, GET /api/failure-groups and
// GET /api/failure-groups/{id} on SQLite and PostgreSQL: the tests of the builds a query matches with
// their verdicts and statistics, a test's history with its evidence, failure groups with their
// latest build, one group with its tests, builds (paged) and days (over real HTTP), a build's tests
// with their ids and verdicts, and project access (a test or group of a project the caller may not
// see does not exist).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuth } from '../../src/auth/index.js';
import { defaultConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import type { BuildStore } from '../../src/store/types.js';
import type { FailureGroupPage, TestHistory, TestsOverview } from '../../src/services/tests.js';
import type { BuildTestsPage } from '../../src/services/build-tests.js';
import type { BuildDetails } from '../../src/services/web.js';
import type { FailureGroupRow } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';

const NOW = Date.UTC(2026, 4, 20, 12);
const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/** 30 builds of `shop` (a stable test, a flaky one, one broken from build 25, one slow) and 5 of `secret`. */
function lines(): string[] {
  const out: string[] = [];
  let t = NOW - 40 * 3_600_000;
  const ev = (eventType: string, data: Record<string, unknown>, gap = 1000) => {
    t += gap;
    return { timestamp: t, type: { majorVersion: 1, minorVersion: 0, eventType }, data };
  };
  const test = (id: number, suite: string, name: string, outcome: string, ms: number, message?: string) => [
    ev('TestStarted', { id, suite, name }),
    ev('TestFinished', { id, outcome, ...(message === undefined ? {} : { failure: { type: 'AssertionError', message } }) }, ms),
  ];
  for (let b = 0; b < 35; b++) {
    const project = b < 30 ? 'shop' : 'secret';
    const flakyFails = b % 7 === 3;
    const broken = b >= 25 && b < 30;
    const events = [
      ev('BuildStarted', {}, 3_600_000),
      ev('ProjectStructure', { rootProjectName: project }),
      ev('UserNamedValue', { key: 'Git commit id', value: `c${Math.floor(b / 2)}` }),
      ...test(1, 'acme.CartTest', 'adds', 'passed', 10),
      ...test(2, 'acme.CartTest', 'racesTimer', flakyFails ? 'failed' : 'passed', 20, flakyFails ? `Timed out after ${5000 + b} ms` : undefined),
      ...test(3, 'acme.PriceTest', 'rounds', broken ? 'failed' : 'passed', 15, broken ? `expected <10.0${b % 10}> but was <10.04>` : undefined),
      ...test(4, 'acme.SlowIT', 'importsCatalog', 'passed', 9000),
      ev('BuildFinished', { outcome: broken || flakyFails ? 'failed' : 'succeeded', failures: broken || flakyFails ? [{ classification: 'verification', message: `${broken ? 2 : 1} tests failed` }] : [] }),
    ];
    out.push(JSON.stringify({ toolType: 'jvmbuild', toolVersion: '8.10', agentVersion: '1.0', events }));
  }
  return out;
}

describe.each(dialects)('the tests API (%s)', (dialect) => {
  let database: DatabaseHandle;
  let store: BuildStore;
  let app: FastifyInstance;
  let cleanup: () => Promise<void>;
  let alice: string;
  let bob: string;
  let base: string;

  beforeAll(async () => {
    let location: { data?: string; url?: string };
    if (dialect === 'sqlite') {
      const dir = await mkdtemp(join(tmpdir(), 'buildscope-tests-api-'));
      location = { data: dir };
      cleanup = () => rm(dir, { recursive: true, force: true });
    } else {
      const pg = (await createTestDatabase())!;
      location = { url: pg.url };
      cleanup = () => pg.drop();
    }
    database = await openDatabase(location);
    store = await openBuildStore(database, { ingestWorker: false });
    await store.ingestNdjson(lines().join('\n'));
    const config = defaultConfig(location);
    app = await buildApp({ config, database, store, logger: createLogger('tests-api-test', 'warn'), clock: () => NOW });
    const auth = await openAuth(database, config, () => NOW);
    await auth.users.addUser({ name: 'alice', password: 'correct horse battery', permissions: ['accessBuildDataViaApi'], projects: null });
    await auth.users.addUser({ name: 'bob', password: 'bobs password 1', permissions: ['accessBuildDataViaApi'], projects: ['shop'] });
    alice = `Bearer ${(await auth.users.createAccessKey('alice', { expiresAt: NOW + 3_600_000 })).key}`;
    bob = `Bearer ${(await auth.users.createAccessKey('bob', { expiresAt: NOW + 3_600_000 })).key}`;
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await store?.close();
    await database?.close();
    await cleanup?.();
  });

  const get = async <T>(url: string, who: string): Promise<{ status: number; body: T }> => {
    const r = await app.inject({ method: 'GET', url, headers: { authorization: who } });
    return { status: r.statusCode, body: r.json() as T };
  };

  it('lists the most failing, flakiest, slowest and newly failing tests with their statistic', async () => {
    const { status, body } = await get<TestsOverview>('/api/tests?query=project:shop', alice);
    expect(status).toBe(200);
    expect(body.tests).toBe(4);
    const names = (xs: readonly { name: string }[]) => xs.map((x) => x.name);
    expect(names(body.mostFailing)).toEqual(['rounds', 'racesTimer']);
    expect(names(body.flakiest)).toEqual(['racesTimer']);
    expect(names(body.newlyFailing)).toEqual(['rounds']);
    expect(body.newlyFailing[0]!.verdict).toBe('broken');
    expect(names(body.slowest)[0]).toBe('importsCatalog');
    const flaky = body.flakiest[0]!;
    expect(flaky.estimate).toMatchObject({ failures: 4, trials: 30 });
    expect(flaky.estimate.low).toBeLessThan(4 / 30);
    expect(flaky.estimate.high).toBeGreaterThan(4 / 30);
    // The timeouts differ only in the number: one group, 4 builds; the broken test's messages likewise.
    const groups = Object.fromEntries(body.failureGroups.map((g) => [g.key, g.builds]));
    expect(groups['AssertionError: Timed out after <n> ms']).toBe(4);
    expect(groups['AssertionError: expected <<n>> but was <<n>>']).toBe(5);
  });

  it("answers a test's history with its verdict and evidence, only to those who may see its project", async () => {
    const overview = (await get<TestsOverview>('/api/tests', alice)).body;
    const broken = overview.newlyFailing.find((t) => t.name === 'rounds')!;
    const { status, body } = await get<TestHistory>(`/api/tests/${broken.testId}/history`, bob);
    expect(status).toBe(200);
    expect(body.runs).toHaveLength(30);
    expect(body.runs.filter((r) => r.outcome === 'failed').map((r) => r.seq)).toEqual([26, 27, 28, 29, 30]);
    expect(body.verdict).toMatchObject({ kind: 'broken', failedRuns: 5, since: { seq: 26 }, lastPassed: { seq: 25 } });
    expect(body.runs[0]!.commit).toBe('c0');
    const flaky = overview.flakiest[0]!;
    const fh = (await get<TestHistory>(`/api/tests/${flaky.testId}/history`, alice)).body;
    expect(fh.verdict.kind).toBe('flaky');
    // Bob sees shop only: secret's tests do not exist for him, and their runs are not counted.
    const secretOnly = (await get<TestsOverview>('/api/tests?query=project:secret', alice)).body;
    expect(secretOnly.tests).toBe(4);
    const secretTest = secretOnly.slowest[0]!;
    expect((await get<TestsOverview>('/api/tests?query=project:secret', bob)).body.tests).toBe(0);
    expect((await get(`/api/tests/${secretTest.testId}/history`, bob)).status).toBe(404);
    expect((await get(`/api/tests/999999/history`, alice)).status).toBe(404);
    expect((await get('/api/tests?query=project:', alice)).status).toBe(400);
  });

  /** The builds of a query, newest first. */
  const buildIds = async (query: string): Promise<string[]> => (await get<{ builds: { id: string }[] }>(`/api/search/builds?query=${encodeURIComponent(query)}&limit=100`, alice)).body.builds.map((b) => b.id);

  it('lists the failure groups of a query with their builds, tests, first and last seen and latest build', async () => {
    const { status, body } = await get<{ groups: FailureGroupRow[] }>('/api/failure-groups?query=project:shop', alice);
    expect(status).toBe(200);
    const byKey = new Map(body.groups.map((g) => [g.key, g]));
    const timeouts = byKey.get('AssertionError: Timed out after <n> ms')!;
    expect(timeouts).toMatchObject({ builds: 4, tests: 1, failures: 4 });
    // The flaky test failed in builds 4, 11, 18 and 25 of shop (b % 7 === 3): the latest is the 25th.
    const shop = await buildIds('project:shop');
    expect(timeouts.lastBuildId).toBe([...shop].reverse()[24]);
    expect(timeouts.firstSeen).toBeLessThan(timeouts.lastSeen!);
    // The build failures are grouped too: "1 tests failed" and "2 tests failed" are one group.
    expect(byKey.get('<n> tests failed')).toMatchObject({ builds: 9, tests: 0 });
    expect(body.groups.map((g) => g.builds)).toEqual([...body.groups.map((g) => g.builds)].sort((a, b) => b - a));
    expect((await get<{ groups: FailureGroupRow[] }>('/api/failure-groups?query=project:shop&limit=1', alice)).body.groups).toHaveLength(1);
    // Bob sees no group of secret's builds; bad input is a problem document, not a 500.
    expect((await get<{ groups: FailureGroupRow[] }>('/api/failure-groups?query=project:secret', bob)).body.groups).toEqual([]);
    for (const url of ['/api/failure-groups?query=project:', '/api/failure-groups?limit=0', '/api/failure-groups?limit=x']) {
      const r = await app.inject({ method: 'GET', url, headers: { authorization: alice } });
      expect(r.statusCode, url).toBe(400);
      expect(r.headers['content-type']).toContain('application/problem+json');
    }
  });

  it("gives each test of a build's page its id and its verdict over time", async () => {
    const overview = (await get<TestsOverview>('/api/tests?query=project:shop', alice)).body;
    const ids = new Map(overview.mostFailing.concat(overview.slowest).map((t) => [t.name, t.testId]));
    // The 29th build of shop: the broken test fails in it, the flaky one passes.
    const build = [...(await buildIds('project:shop'))].reverse()[28]!;
    const { status, body } = await get<BuildTestsPage>(`/api/builds/${build}/tests`, bob);
    expect(status).toBe(200);
    const rows = new Map(body.tests.map((t) => [t.name, t]));
    expect(rows.get('rounds')).toMatchObject({ outcome: 'failed', testId: ids.get('rounds'), verdict: 'broken' });
    expect(rows.get('racesTimer')).toMatchObject({ outcome: 'passed', testId: ids.get('racesTimer'), verdict: 'flaky' });
    expect(rows.get('adds')).toMatchObject({ verdict: 'passing' });
    const details = (await get<BuildDetails>(`/api/builds/${build}/details`, alice)).body;
    expect(details.tests.failed.map((t) => [t.name, t.testId, t.verdict])).toEqual([['rounds', ids.get('rounds'), 'broken']]);
  });

  /** A GET over real HTTP: status, content type and body. */
  const fetchJson = async <T>(path: string, who?: string): Promise<{ status: number; type: string; body: T }> => {
    const r = await fetch(base + path, { headers: who === undefined ? {} : { authorization: who } });
    return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.json()) as T };
  };
  const groupIdOf = async (key: string, query = ''): Promise<number> => {
    const { body } = await get<{ groups: FailureGroupRow[] }>(`/api/failure-groups?query=${encodeURIComponent(query)}`, alice);
    return body.groups.find((g) => g.key === key)!.groupId;
  };
  const TIMEOUTS = 'AssertionError: Timed out after <n> ms';

  it('answers one failure group with its tests, builds newest first, days and pages, over HTTP', async () => {
    const id = await groupIdOf(TIMEOUTS);
    const { status, type, body } = await fetchJson<FailureGroupPage>(`/api/failure-groups/${id}?query=project:shop`, alice);
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/json/);
    expect(body.group).toMatchObject({ groupId: id, key: TIMEOUTS, builds: 4, tests: 1, failures: 4 });
    expect(body.group.sample).toMatch(/^Timed out after 50\d\d ms$/);
    expect(body.buildFailures).toBe(0);
    const flaky = (await get<TestsOverview>('/api/tests?query=project:shop', alice)).body.flakiest[0]!;
    expect(body.tests.map((t) => [t.testId, t.name, t.failures, t.builds])).toEqual([[flaky.testId, 'racesTimer', 4, 4]]);
    // The flaky test failed in shop's builds 4, 11, 18 and 25 (b % 7 === 3), listed newest first.
    const shop = [...(await buildIds('project:shop'))].reverse();
    expect(body.builds.map((b) => b.buildId)).toEqual([shop[24], shop[17], shop[10], shop[3]]);
    expect(body.builds.every((b) => b.outcome === 'failed' && b.project === 'shop' && b.failures === 1 && b.tests === 1)).toBe(true);
    expect(body.next).toBeNull();
    expect(body.group.lastBuildId).toBe(shop[24]);
    // Every build in one UTC day; the days oldest first, each the first instant of its day.
    expect(body.days.reduce((n, d) => n + d.builds, 0)).toBe(4);
    expect(body.days.every((d) => d.day % 86_400_000 === 0)).toBe(true);
    expect(body.days.map((d) => d.day)).toEqual([...body.days.map((d) => d.day)].sort((a, b) => a - b));
    // Pages of two follow the keyset and together are the whole list.
    expect(await pagesOf(id, 'project:shop', 2)).toEqual(body.builds.map((b) => b.buildId));
  });

  /** A group's builds read a page of `limit` at a time, following `next`, checking each page's keyset. */
  const pagesOf = async (id: number, query: string, limit: number): Promise<string[]> => {
    const out: string[] = [];
    let before: string | null = null;
    do {
      const after: string = before === null ? '' : `&before=${encodeURIComponent(before)}`;
      const page: FailureGroupPage = (await fetchJson<FailureGroupPage>(`/api/failure-groups/${id}?query=${encodeURIComponent(query)}&limit=${limit}${after}`, alice)).body;
      expect(page.builds.length).toBeLessThanOrEqual(limit);
      const last = page.builds[page.builds.length - 1];
      if (page.next !== null) expect(page.next).toBe(`${last!.startTime ?? -1}:${last!.seq}`);
      out.push(...page.builds.map((b) => b.buildId));
      before = page.next;
    } while (before !== null);
    return out;
  };

  it("groups the builds' own failures too, and a query that matches none of a group's builds leaves it empty", async () => {
    const own = (await fetchJson<FailureGroupPage>(`/api/failure-groups/${await groupIdOf('<n> tests failed', 'project:shop')}?query=project:shop`, alice)).body;
    expect(own.group).toMatchObject({ key: '<n> tests failed', builds: 9, tests: 0, failures: 9 });
    expect(own.buildFailures).toBe(9);
    expect(own.tests).toEqual([]);
    expect(own.builds).toHaveLength(9);
    const none = await fetchJson<FailureGroupPage>(`/api/failure-groups/${own.group.groupId}?query=${encodeURIComponent('project:shop buildOutcome:succeeded')}`, alice);
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ group: { key: '<n> tests failed', builds: 0 }, builds: [], tests: [], days: [], next: null });
  });

  it('a group of builds the caller may not see does not exist for her; bad input is a problem document', async () => {
    // Secret's flaky failure is in the timeouts group too: counted for alice, not for bob.
    const id = await groupIdOf(TIMEOUTS);
    expect((await fetchJson<FailureGroupPage>(`/api/failure-groups/${id}`, alice)).body.group.builds).toBe(5);
    expect((await fetchJson<FailureGroupPage>(`/api/failure-groups/${id}`, bob)).body.group.builds).toBe(4);
    // A failure only secret's builds have.
    const at = NOW - 3_600_000;
    const ev = (t: number, eventType: string, data: Record<string, unknown>) => ({ timestamp: at + t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    const line = { toolType: 'jvmbuild', toolVersion: '8.10', agentVersion: '1.0', events: [ev(0, 'BuildStarted', {}), ev(1, 'ProjectStructure', { rootProjectName: 'secret' }), ev(9, 'BuildFinished', { outcome: 'failed', failures: [{ classification: 'configuration', message: 'Vault key /etc/vault/key.pem is sealed' }] })] };
    await store.ingestNdjson(JSON.stringify(line));
    const secret = await groupIdOf('Vault key <path> is sealed');
    expect((await fetchJson<FailureGroupPage>(`/api/failure-groups/${secret}`, alice)).body.group).toMatchObject({ builds: 1, sample: 'Vault key /etc/vault/key.pem is sealed' });
    const hidden = await fetchJson<{ type: string; status: number; detail: string }>(`/api/failure-groups/${secret}`, bob);
    const unknown = await fetchJson<{ type: string; status: number; detail: string }>('/api/failure-groups/999999', bob);
    expect([hidden.status, unknown.status]).toEqual([404, 404]);
    expect(hidden.type).toContain('application/problem+json');
    expect({ ...hidden.body, detail: hidden.body.detail.replace(String(secret), 'ID') }).toEqual({ ...unknown.body, detail: unknown.body.detail.replace('999999', 'ID') });
    for (const path of [`/api/failure-groups/x`, '/api/failure-groups/0', `/api/failure-groups/${id}?query=project:`, `/api/failure-groups/${id}?limit=0`, `/api/failure-groups/${id}?before=x`, `/api/failure-groups/${id}?before=12`]) {
      const r = await fetchJson<{ status: number }>(path, alice);
      expect(r.status, path).toBe(400);
      expect(r.type, path).toContain('application/problem+json');
    }
    expect((await fetchJson(`/api/failure-groups/${id}`)).status).toBe(401);
  });

  it("lists a group's builds by when they started: a build sent late, that started first, comes last", async () => {
    const id = await groupIdOf(TIMEOUTS);
    const at = NOW - 60 * 3_600_000;
    const ev = (t: number, eventType: string, data: Record<string, unknown>) => ({ timestamp: at + t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    const line = {
      toolType: 'jvmbuild',
      toolVersion: '8.10',
      agentVersion: '1.0',
      events: [
        ev(0, 'BuildStarted', {}),
        ev(1, 'ProjectStructure', { rootProjectName: 'shop' }),
        ev(2, 'TestStarted', { id: 2, suite: 'acme.CartTest', name: 'racesTimer' }),
        ev(30, 'TestFinished', { id: 2, outcome: 'failed', failure: { type: 'AssertionError', message: 'Timed out after 4999 ms' } }),
        ev(40, 'BuildFinished', { outcome: 'failed', failures: [] }),
      ],
    };
    const [late] = await store.ingestNdjson(JSON.stringify(line));
    const { body } = await fetchJson<FailureGroupPage>(`/api/failure-groups/${id}?query=project:shop`, alice);
    expect(body.builds).toHaveLength(5);
    expect(late).toMatchObject({ status: 'stored' });
    expect(body.builds[4]!.buildId).toBe((late as { buildId: string }).buildId);
    const starts = body.builds.map((b) => b.startTime!);
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    // First seen is when the late build started.
    expect(body.group.firstSeen).toBe(at);
    expect(await pagesOf(id, 'project:shop', 2)).toEqual(body.builds.map((b) => b.buildId));
    expect(await pagesOf(id, 'project:shop', 1)).toEqual(body.builds.map((b) => b.buildId));
  });
});
