// The web app's HTTP calls over real HTTP: sign-in with a password or an access key (cookie flags,
// CSRF, expiry, sign-out), the list page, count, facets, trends and build details, each honouring
// the user's projects, and their errors as problem documents; a build's tests and console log, paged.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuth } from '../../src/auth/index.js';
import { defaultConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { sessionPlugin, SESSION_TTL_MS } from '../../src/http/session-plugin.js';
import { createWebPlugin } from '../../src/http/web-plugin.js';
import { createLogger } from '../../src/log.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildStore, type BuildWithAttributes } from '../../src/store/types.js';
import type { BuildDetails } from '../../src/services/web.js';
import type { ConsolePage, TestsPage } from '../../src/services/build-report.js';
import { CONSOLE_LINES, DIAGNOSTIC, FAILED_BUILD, FAILED_TEST, failedBuildLine, FIRST_ERROR_LINE, TEST_COUNT } from './failed-build.js';

const NOW = Date.UTC(2026, 4, 20, 12);
let now = NOW;
let dir: string;
let database: DatabaseHandle;
let store: BuildStore;
let app: FastifyInstance;
let base: string;
let aliceKey: string;
let all: BuildWithAttributes[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'buildscope-web-api-'));
  database = await openDatabase({ data: dir });
  store = await openBuildStore(database, { ingestWorker: false });
  await store.ingestNdjson([...demoBuilds({ builds: 180, seed: 4, now: NOW })].join('\n'));
  all = (await store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
  const config = defaultConfig({ data: dir });
  const clock = () => now;
  app = await buildApp({ config, database, store, logger: createLogger('web-api-test', 'warn'), clock }, { plugins: [sessionPlugin, createWebPlugin({ root: join(dir, 'no-pages') })] });
  const auth = await openAuth(database, config, clock);
  await auth.users.addUser({ name: 'alice', password: 'correct horse battery', permissions: ['accessBuildDataViaApi'], projects: null });
  await auth.users.addUser({ name: 'bob', password: 'bobs password 1', permissions: ['accessBuildDataViaApi'], projects: ['inventory'] });
  await auth.users.addUser({ name: 'carol', password: 'carols password', permissions: [], projects: null });
  aliceKey = (await auth.users.createAccessKey('alice', { expiresAt: NOW + 3_600_000 })).key;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const a = app.server.address();
  if (a === null || typeof a === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${a.port}`;
});

afterAll(async () => {
  const closing = app?.close();
  app?.server.closeAllConnections();
  await closing;
  await store?.close();
  await database?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Session {
  readonly cookie: string;
  readonly csrf: string;
  readonly setCookies: string[];
}

async function signIn(body: Record<string, string>, headers: Record<string, string> = {}): Promise<Session> {
  const res = await fetch(`${base}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  const setCookies = res.headers.getSetCookie();
  const json = (await res.json()) as { csrfToken: string };
  return { cookie: setCookies.map((c) => c.split(';')[0]).join('; '), csrf: json.csrfToken, setCookies };
}

const get = (path: string, cookie?: string) => fetch(`${base}${path}`, { headers: cookie ? { cookie } : {} });

describe('sign-in', () => {
  it('with a password sets an HttpOnly, SameSite=Strict, expiring session cookie (Secure only over HTTPS)', async () => {
    const s = await signIn({ user: 'alice', password: 'correct horse battery' });
    const session = s.setCookies.find((c) => c.startsWith('bs_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Strict/i);
    expect(session).toMatch(new RegExp(`Max-Age=${SESSION_TTL_MS / 1000}`));
    expect(session).not.toMatch(/Secure/i);
    const csrf = s.setCookies.find((c) => c.startsWith('bs_csrf='))!;
    expect(csrf).not.toMatch(/HttpOnly/i);
    const me = await get('/api/session', s.cookie);
    expect(await me.json()).toMatchObject({ user: 'alice', credential: 'token', projects: null, csrfToken: s.csrf });
    const https = await signIn({ user: 'alice', password: 'correct horse battery' }, { 'x-forwarded-proto': 'https' });
    expect(https.setCookies.find((c) => c.startsWith('bs_session='))).toMatch(/Secure/i);
  });

  it('with an access key lasts no longer than the key', async () => {
    const s = await signIn({ accessKey: aliceKey });
    expect(s.setCookies.find((c) => c.startsWith('bs_session='))).toMatch(/Max-Age=3600\b/);
    expect((await get('/api/search/count', s.cookie)).status).toBe(200);
  });

  it('refuses a wrong password, an unknown key and a mixed body with problem documents', async () => {
    for (const body of [{ user: 'alice', password: 'nope' }, { accessKey: 'bsk_unknown' }, { user: 'alice', accessKey: aliceKey }]) {
      const res = await fetch(`${base}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect([400, 401]).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('answers 401 to calls without a session, and ends the session when it expires', async () => {
    expect((await get('/api/search/count')).status).toBe(401);
    expect((await get('/api/session')).status).toBe(204);
    const s = await signIn({ user: 'alice', password: 'correct horse battery' });
    now += SESSION_TTL_MS + 1000;
    try {
      const res = await get('/api/search/count', s.cookie);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/session has ended/);
    } finally {
      now = NOW;
    }
  });

  it('is honoured by the REST API too (the session is an access token)', async () => {
    const s = await signIn({ user: 'bob', password: 'bobs password 1' });
    const res = await get('/api/builds?maxBuilds=1000&fromInstant=0', s.cookie);
    expect(res.status).toBe(200);
    const builds = (await res.json()) as { id: string }[];
    const inventory = all.filter((b) => b.project === 'inventory');
    expect(builds.map((b) => b.id).sort()).toEqual(inventory.map((b) => b.id).sort());
  });

  it('refuses a change made with the cookie but without the CSRF header, and signs out with it', async () => {
    const s = await signIn({ user: 'alice', password: 'correct horse battery' });
    const forged = await fetch(`${base}/api/session`, { method: 'DELETE', headers: { cookie: s.cookie } });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { detail: string }).detail).toMatch(/x-csrf-token/);
    // Another first character: a token that begins with `x` would be unchanged by writing `x` there.
    const other = (s.csrf.startsWith('x') ? 'y' : 'x') + s.csrf.slice(1);
    const wrong = await fetch(`${base}/api/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': other } });
    expect(wrong.status).toBe(401);
    const out = await fetch(`${base}/api/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(204);
    const cleared = out.headers.getSetCookie();
    expect(cleared.find((c) => c.startsWith('bs_session='))).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/);
  });
});

describe('the pages\' calls', () => {
  it('count, list and facets agree with the store and honour the projects', async () => {
    const alice = await signIn({ user: 'alice', password: 'correct horse battery' });
    const bob = await signIn({ user: 'bob', password: 'bobs password 1' });
    const q = encodeURIComponent('buildOutcome:failed');
    const failed = all.filter((b) => b.attributes['buildOutcome'] === 'failed');
    expect(await (await get(`/api/search/count?query=${q}`, alice.cookie)).json()).toEqual({ count: failed.length });
    expect(await (await get(`/api/search/count?query=${q}`, bob.cookie)).json()).toEqual({ count: failed.filter((b) => b.project === 'inventory').length });
    const facets = (await (await get(`/api/search/facets?query=${q}`, bob.cookie)).json()) as { project: { value: string }[]; buildOutcome: { value: string; count: number }[] };
    expect(facets.project.map((p) => p.value)).toEqual(['inventory']);
    expect(facets.buildOutcome).toEqual([{ value: 'failed', count: failed.filter((b) => b.project === 'inventory').length }]);

    // Keyset pages: newest first, no build twice, all of them.
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page = (await (await get(`/api/search/builds?query=${q}&limit=7${after ? `&after=${after}` : ''}`, alice.cookie)).json()) as { builds: { id: string }[]; next: string | null };
      seen.push(...page.builds.map((b) => b.id));
      after = page.next;
    } while (after !== null);
    expect(seen).toEqual(failed.map((b) => b.id).reverse());
  });

  it('trends and details answer for visible builds only; bad input is a 400 problem', async () => {
    const bob = await signIn({ user: 'bob', password: 'bobs password 1' });
    const trends = (await (await get(`/api/trends?tz=Europe/Berlin&interval=week`, bob.cookie)).json()) as { buckets: { builds: number }[] };
    expect(trends.buckets.reduce((s, b) => s + b.builds, 0)).toBe(all.filter((b) => b.project === 'inventory' && (b.attributes['buildStartTime'] as number) >= NOW - 37 * 86_400_000).length);
    const other = all.find((b) => b.project !== 'inventory')!;
    expect((await get(`/api/builds/${other.id}/details`, bob.cookie)).status).toBe(404);
    const own = all.find((b) => b.project === 'inventory')!;
    const details = (await (await get(`/api/builds/${own.id}/details`, bob.cookie)).json()) as { tasks: unknown[]; project: string };
    expect(details.project).toBe('inventory');
    expect(details.tasks.length).toBeGreaterThan(2);
    const events = (await (await get(`/api/builds/${own.id}/events?type=TaskFinished&limit=2`, bob.cookie)).json()) as { events: { type: { eventType: string } }[]; total: number };
    expect(events.events.map((e) => e.type.eventType)).toEqual(['TaskFinished', 'TaskFinished']);
    expect(events.total).toBe(details.tasks.length);
    for (const [path, detail] of [
      ['/api/trends?tz=Mars/Olympus', /time zone/],
      ['/api/trends?from=yesterday', /from/],
      ['/api/trends?interval=month', /interval/],
      ['/api/search/count?query=buildOutcom:failed', /Invalid query/],
      ['/api/search/builds?after=nosuchbuild12', /after/],
    ] as const) {
      const res = await get(path, bob.cookie);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    }
  });

  it('need the permission to read build data', async () => {
    const carol = await signIn({ user: 'carol', password: 'carols password' });
    expect((await get('/api/search/count', carol.cookie)).status).toBe(403);
    expect((await get('/api/trends', carol.cookie)).status).toBe(403);
  });

  it('serve a favicon, and /s/<id> leads to the build page', async () => {
    const icon = await get('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/image\/svg\+xml/);
    const s = await fetch(`${base}/s/${all[0]!.id}`, { redirect: 'manual' });
    expect(s.status).toBe(302);
    expect(s.headers.get('location')).toBe(`/builds/${all[0]!.id}`);
    const page = await get('/builds');
    expect(page.status).toBe(503);
  });
});

describe("a build's tests and console log", () => {
  it('are paged from the build details: tests failed and flaky first, filtered; the log by lines, with search; for visible builds only', async () => {
    const stored = await store.ingestNdjson(failedBuildLine(FAILED_BUILD, NOW - 3_600_000));
    expect(stored.map((r) => r.status)).toEqual(['stored']);
    const alice = await signIn({ user: 'alice', password: 'correct horse battery' });
    const json = async <T>(path: string, cookie = alice.cookie): Promise<T> => {
      const res = await get(path, cookie);
      expect(res.status, path).toBe(200);
      return (await res.json()) as T;
    };
    const d = await json<BuildDetails>(`/api/builds/${FAILED_BUILD}/details`);
    expect(d.tests.counts).toEqual({ total: TEST_COUNT, passed: 1199, failed: 2, skipped: 3, flaky: 1 });
    expect(d.tests.failed.map((t) => t.key).sort()).toEqual(['acme.PriceTest.roundsHalfCents', 'acme.inventory.StockServiceTest.reservesStock']);
    expect(d.tests.failed.find((t) => t.name === FAILED_TEST.name)).toMatchObject({ failure: { type: 'org.opentest4j.AssertionFailedError', message: FAILED_TEST.message }, output: 'rounding 10.045 with HALF_DOWN\n', task: ':app:test' });
    expect(d.failures[0]!.cause!.diagnostics).toEqual([{ ...DIAGNOSTIC, severity: 'error' }]);
    expect(d.failures[0]!.cause!.outputTail).toContain('1 error');
    expect(d.console).toEqual({ lines: CONSOLE_LINES, truncated: true, firstError: { line: FIRST_ERROR_LINE, text: expect.stringContaining(`${DIAGNOSTIC.file}:${DIAGNOSTIC.line}: error:`) } });

    const first = await json<TestsPage>(`/api/builds/${FAILED_BUILD}/tests?limit=3`);
    expect(first.total).toBe(TEST_COUNT);
    expect(first.tests.map((t) => [t.outcome, t.flaky])).toEqual([['failed', false], ['failed', false], ['passed', true]]);
    expect(first.tests[2]).toMatchObject({ key: 'acme.auth.LoginIT.locksAfterFiveFailures', attempts: 2, failure: { message: 'Login did not complete within 5000 ms' } });
    const slowest = await json<TestsPage>(`/api/builds/${FAILED_BUILD}/tests?filter=passed&limit=5`);
    const durations = slowest.tests.map((t) => t.duration!);
    expect(durations).toEqual([...durations].sort((a, b) => b - a));
    expect((await json<TestsPage>(`/api/builds/${FAILED_BUILD}/tests?name=PRICETEST`)).tests.map((t) => t.key)).toEqual(['acme.PriceTest.roundsHalfCents']);
    const skipped = await json<TestsPage>(`/api/builds/${FAILED_BUILD}/tests?filter=skipped`);
    expect(skipped.tests.map((t) => t.skipReason)).toEqual(new Array(3).fill('disabled until the search index migration'));
    const last = await json<TestsPage>(`/api/builds/${FAILED_BUILD}/tests?offset=1200&limit=100`);
    expect([last.tests.length, last.offset]).toEqual([4, 1200]);

    const lines = await json<ConsolePage>(`/api/builds/${FAILED_BUILD}/console?offset=1400&limit=2`);
    expect(lines).toMatchObject({ offset: 1400, total: CONSOLE_LINES, truncated: true });
    expect(lines.lines).toHaveLength(2);
    expect(lines.lines[0]).toContain('BUILD FAILED');
    expect(lines.lines[0]).toContain('\u001b[31;1m');
    // Search reads the text without its colour codes, in any case.
    expect((await json<ConsolePage>(`/api/builds/${FAILED_BUILD}/console?search=${encodeURIComponent('build FAILED in')}&limit=1`)).matches).toEqual({ lines: [1400], count: 1 });

    // The export streams send the new events like any other (they read the stored event texts).
    const types = new Set<string>();
    for await (const e of store.streamEventTexts(FAILED_BUILD)) types.add((JSON.parse(e.json) as { type: { eventType: string } }).type.eventType);
    expect([...types].filter((t) => /^(Test|Console)/.test(t)).sort()).toEqual(['ConsoleOutput', 'TestFinished', 'TestOutput', 'TestStarted']);

    for (const path of [`/api/builds/${FAILED_BUILD}/tests?limit=100000`, `/api/builds/${FAILED_BUILD}/tests?filter=broken`, `/api/builds/${FAILED_BUILD}/console?offset=-1`]) {
      const res = await get(path, alice.cookie);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    // Another project's build, and a build that does not exist, are not found; without the permission, forbidden.
    const bob = await signIn({ user: 'bob', password: 'bobs password 1' });
    for (const path of [`/api/builds/${FAILED_BUILD}/tests`, `/api/builds/${FAILED_BUILD}/console`, '/api/builds/nosuchbuild12/console']) {
      const res = await get(path, bob.cookie);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/No available build/);
    }
    const carol = await signIn({ user: 'carol', password: 'carols password' });
    expect((await get(`/api/builds/${FAILED_BUILD}/console`, carol.cookie)).status).toBe(403);
  });
});
