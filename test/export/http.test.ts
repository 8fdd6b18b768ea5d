// The export API over real HTTP on 127.0.0.1 (SQLite): framing on raw sockets, every rule of
// seed 001 in v1 and v2, gzip, resume, 204, 503, query, auth and CORS.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { EventSource } from 'eventsource';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildSummary } from '../../src/store/types.js';
import { buildEventMessage, buildMessage } from '../../src/export/messages.js';
import { rawGet, startServer, type TestServer } from './harness.js';
import { parseSseText } from './sse-parse.js';
import { waitFor } from '../support/wait.js';

let s: TestServer;
let builds: BuildSummary[];
let incompleteId: string;

const V1 = '/build-export/v1';
const V2 = '/build-export/v2';

async function eventsOf(id: string): Promise<BuildEvent[]> {
  const out: BuildEvent[] = [];
  for await (const e of s.store.streamEvents(id)) out.push(e);
  return out;
}

beforeAll(async () => {
  s = await startServer();
  const lines = [...demoBuilds({ builds: 36, seed: 11 })];
  // Two batches, a moment apart, so that availableAt differs between them.
  await s.store.ingestNdjson(lines.slice(0, 18).join('\n'));
  const firstAvailable = Math.max(...((await s.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[]).map((b) => b.availableAt));
  await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(firstAvailable), { timeout: 10_000, interval: 5 });
  await s.store.ingestNdjson(lines.slice(18).join('\n'));
  builds = (await s.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[];
  expect(builds).toHaveLength(36);
  // A build whose BuildFinished has not arrived: still being stored.
  const unfinished = JSON.parse([...demoBuilds({ builds: 1, seed: 99 })][0]!) as { buildId: string; events: BuildEvent[] };
  unfinished.events = unfinished.events.filter((e) => e.type.eventType !== 'BuildFinished');
  incompleteId = unfinished.buildId;
  const [r] = await s.store.ingestNdjson(JSON.stringify(unfinished));
  expect(r).toMatchObject({ status: 'stored', complete: false });
});
afterAll(async () => s?.close());

const auth = (): Record<string, string> => ({ Authorization: s.bearer });

describe('listing /builds/since/:date', () => {
  it('v2: every build in availability order, exact SSE framing, then the connection closes', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0`, auth());
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['x-accel-buffering']).toBe('no');
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.text).toBe(builds.map((b) => buildMessage(2, b)).join(''));
    const parsed = parseSseText(r.text).events;
    expect(parsed.map((e) => e.id)).toEqual(builds.map((b) => b.id));
    expect(parsed.every((e) => e.event === 'Build')).toBe(true);
    expect(JSON.parse(parsed[0]!.data)).toEqual({
      buildId: builds[0]!.id,
      timestamp: builds[0]!.availableAt,
      toolType: builds[0]!.toolType,
      toolVersion: builds[0]!.toolVersion,
      agentVersion: builds[0]!.agentVersion,
    });
  });

  it('v1: only native builds, with nativeVersion and pluginVersion', async () => {
    const r = await rawGet(s.port, `${V1}/builds/since/0`, auth());
    const natives = builds.filter((b) => b.toolType === 'native');
    expect(natives.length).toBeGreaterThan(2);
    expect(r.text).toBe(natives.map((b) => buildMessage(1, b)).join(''));
    const data = JSON.parse(parseSseText(r.text).events[0]!.data) as Record<string, unknown>;
    expect(Object.keys(data)).toEqual(['buildId', 'timestamp', 'nativeVersion', 'pluginVersion']);
  });

  it('an epoch time lists builds available at or after it', async () => {
    const at = builds[20]!.availableAt;
    const r = await rawGet(s.port, `${V2}/builds/since/${at}`, auth());
    const expected = builds.filter((b) => b.availableAt >= at);
    expect(expected.length).toBeLessThan(builds.length);
    expect(parseSseText(r.text).events.map((e) => e.id)).toEqual(expected.map((b) => b.id));
  });

  it('a future time or garbage is a 400 problem document', async () => {
    for (const date of [String(Date.now() + 60_000), 'yesterday', '-5', '1.5', 'NOW']) {
      const r = await rawGet(s.port, `${V2}/builds/since/${encodeURIComponent(date)}`, auth());
      expect(r.status, date).toBe(400);
      expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
      const doc = JSON.parse(r.text) as { type: string; title: string; status: number; detail: string };
      expect(doc).toMatchObject({ type: 'urn:buildscope:problem:invalid-parameter', title: 'Bad Request', status: 400 });
      expect(doc.detail).toMatch(/^1[0-9]+$/.test(date) ? /future/ : /Invalid date/);
    }
  });

  it('now without stream has nothing to send: 204', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/now`, auth());
    expect(r.status).toBe(204);
    expect(r.raw.length).toBe(0);
  });
});

describe('listing /builds/sinceBuild/:buildId', () => {
  it('lists the builds received after that build', async () => {
    const r = await rawGet(s.port, `${V2}/builds/sinceBuild/${builds[9]!.id}`, auth());
    expect(r.text).toBe(builds.slice(10).map((b) => buildMessage(2, b)).join(''));
  });

  it('v1 lists the native builds after it', async () => {
    const r = await rawGet(s.port, `${V1}/builds/sinceBuild/${builds[9]!.id}`, auth());
    expect(r.text).toBe(builds.slice(10).filter((b) => b.toolType === 'native').map((b) => buildMessage(1, b)).join(''));
  });

  it('after the newest build: 204; unknown: 404; malformed: 400; still being stored: 503 with Retry-After', async () => {
    expect((await rawGet(s.port, `${V2}/builds/sinceBuild/${builds.at(-1)!.id}`, auth())).status).toBe(204);
    expect((await rawGet(s.port, `${V2}/builds/sinceBuild/zzzzzzzzzzzzz`, auth())).status).toBe(404);
    const bad = await rawGet(s.port, `${V2}/builds/sinceBuild/short`, auth());
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).detail).toMatch(/13 characters/);
    const busy = await rawGet(s.port, `${V2}/builds/sinceBuild/${incompleteId}`, auth());
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('2');
  });
});

describe('events /build/:buildId/events', () => {
  it('one Build message, then every event in order with ids 1, 2, ...', async () => {
    const b = builds.find((x) => x.toolType === 'jvmbuild')!;
    const events = await eventsOf(b.id);
    expect(events.length).toBeGreaterThan(10);
    const r = await rawGet(s.port, `${V2}/build/${b.id}/events`, auth());
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.text).toBe(buildMessage(2, b) + events.map((e, i) => buildEventMessage(i + 1, e)).join(''));
    const parsed = parseSseText(r.text).events;
    expect(parsed[0]).toMatchObject({ id: b.id, event: 'Build' });
    expect(parsed.slice(1).map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    const first = JSON.parse(parsed[1]!.data) as BuildEvent;
    expect(first).toEqual({ timestamp: events[0]!.timestamp, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildStarted' }, data: {} });
  });

  it('eventTypes filters case-sensitively and numbers the filtered stream 1, 2, ...', async () => {
    const b = builds[0]!;
    const events = (await eventsOf(b.id)).filter((e) => ['BuildStarted', 'BuildFinished', 'BuildRequestedTasks'].includes(e.type.eventType));
    const r = await rawGet(s.port, `${V2}/build/${b.id}/events?eventTypes=BuildStarted,BuildRequestedTasks,BuildFinished`, auth());
    expect(r.text).toBe(buildMessage(2, b) + events.map((e, i) => buildEventMessage(i + 1, e)).join(''));
    const lower = await rawGet(s.port, `${V2}/build/${b.id}/events?eventTypes=buildstarted`, auth());
    expect(lower.text).toBe(buildMessage(2, b));
    const requested = parseSseText(r.text).events.map((e) => JSON.parse(e.data) as BuildEvent).find((e) => e.type?.eventType === 'BuildRequestedTasks')!;
    expect(Array.isArray(requested.data['requested'])).toBe(true);
    expect(Array.isArray(requested.data['excluded'])).toBe(true);
  });

  it('v1 serves native builds and answers 400 (no events) for another tool', async () => {
    const native = builds.find((x) => x.toolType === 'native')!;
    const ok = await rawGet(s.port, `${V1}/build/${native.id}/events`, auth());
    expect(ok.status).toBe(200);
    expect(parseSseText(ok.text).events[0]).toMatchObject({ id: native.id, event: 'Build' });
    expect(JSON.parse(parseSseText(ok.text).events[0]!.data)).toHaveProperty('nativeVersion', native.toolVersion);
    const other = builds.find((x) => x.toolType === 'jsbuild')!;
    const r = await rawGet(s.port, `${V1}/build/${other.id}/events`, auth());
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toMatch(/problem\+json/);
    expect(JSON.parse(r.text).detail).toMatch(/jsbuild/);
  });

  it('a build still being stored: 503 with Retry-After; unknown: 404; malformed: 400', async () => {
    const r = await rawGet(s.port, `${V2}/build/${incompleteId}/events`, auth());
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('2');
    expect(JSON.parse(r.text)).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect((await rawGet(s.port, `${V2}/build/aaaaaaaaaaaaa/events`, auth())).status).toBe(404);
    expect((await rawGet(s.port, `${V2}/build/AAAAAAAAAAAAA/events`, auth())).status).toBe(400);
  });
});

describe('Last-Event-ID', () => {
  it('resumes a listing after that build, and answers 204 when nothing is left', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0`, { ...auth(), 'Last-Event-ID': builds[29]!.id });
    expect(r.text).toBe(builds.slice(30).map((b) => buildMessage(2, b)).join(''));
    const done = await rawGet(s.port, `${V2}/builds/since/0`, { ...auth(), 'Last-Event-ID': builds.at(-1)!.id });
    expect(done.status).toBe(204);
    const unknown = await rawGet(s.port, `${V2}/builds/since/0`, { ...auth(), 'Last-Event-ID': 'nosuchbuild00' });
    expect(unknown.status).toBe(400);
  });

  it('resumes events after a running number, skips the Build message, 204 at the end', async () => {
    const b = builds[3]!;
    const events = await eventsOf(b.id);
    const r = await rawGet(s.port, `${V2}/build/${b.id}/events`, { ...auth(), 'Last-Event-ID': '5' });
    expect(r.text).toBe(events.slice(5).map((e, i) => buildEventMessage(i + 6, e)).join(''));
    const afterBuild = await rawGet(s.port, `${V2}/build/${b.id}/events`, { ...auth(), 'Last-Event-ID': b.id });
    expect(afterBuild.text).toBe(events.map((e, i) => buildEventMessage(i + 1, e)).join(''));
    const done = await rawGet(s.port, `${V2}/build/${b.id}/events`, { ...auth(), 'Last-Event-ID': String(events.length) });
    expect(done.status).toBe(204);
    const bad = await rawGet(s.port, `${V2}/build/${b.id}/events`, { ...auth(), 'Last-Event-ID': 'abc' });
    expect(bad.status).toBe(400);
  });

  it('the eventsource client reads a listing once, reconnects with Last-Event-ID, gets 204 and stops', async () => {
    const ids: string[] = [];
    const es = new EventSource(`${s.base}${V2}/builds/since/0`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: s.bearer } }),
    });
    const closed = new Promise<number | undefined>((resolve) => {
      es.addEventListener('error', (e) => {
        if (es.readyState === EventSource.CLOSED) resolve((e as unknown as { code?: number }).code);
      });
    });
    es.addEventListener('Build', (e) => ids.push((e as MessageEvent).lastEventId));
    const code = await closed;
    es.close();
    expect(code).toBe(204);
    expect(ids).toEqual(builds.map((b) => b.id));
  });
});

describe('gzip', () => {
  it('compresses listings and events; the decoded bytes are the same as plain', async () => {
    for (const path of [`${V2}/builds/since/0`, `${V1}/builds/since/0`, `${V2}/build/${builds[1]!.id}/events`]) {
      const plain = await rawGet(s.port, path, auth());
      const gz = await rawGet(s.port, path, { ...auth(), 'Accept-Encoding': 'gzip' });
      expect(gz.status).toBe(200);
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.headers['vary']).toMatch(/Accept-Encoding/);
      expect(gz.raw.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      expect(gz.text).toBe(plain.text);
      expect(gz.raw.length).toBeLessThan(plain.raw.length / 2);
    }
    const refused = await rawGet(s.port, `${V2}/builds/since/0`, { ...auth(), 'Accept-Encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('a streaming gzip client gets the first message before the stream ends', async () => {
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
      request(`${s.base}${V2}/builds/since/0?stream`, { headers: { ...auth(), 'accept-encoding': 'gzip' } }, resolve).on('error', reject).end(),
    );
    expect(res.headers['content-encoding']).toBe('gzip');
    const body = res.pipe(createGunzip());
    let text = '';
    await new Promise<void>((resolve) =>
      body.on('data', (c: Buffer) => {
        text += c.toString();
        if (parseSseText(text).events.length >= builds.length) resolve();
      }),
    );
    expect(res.complete).toBe(false); // still streaming
    expect(parseSseText(text).events.map((e) => e.id)).toEqual(builds.map((b) => b.id));
    res.destroy();
  });
});

describe('stream', () => {
  it('stays open, sends heartbeat comments, and pushes a new build within a second', async () => {
    // At least one heartbeat first (200 ms): the stream waits for new builds.
    let beat!: () => void;
    const heartbeat = new Promise<void>((res) => (beat = res));
    const r = rawGet(s.port, `${V2}/builds/since/now?stream`, auth(), {
      until: (t) => (t.includes(': heartbeat') && beat(), parseSseText(t).events.length >= 1 && t.includes(': heartbeat')),
      timeoutMs: 60_000,
    });
    await heartbeat;
    const line = [...demoBuilds({ builds: 1, seed: 4242 })][0]!;
    const started = Date.now();
    await s.store.ingestNdjson(line);
    const got = await r;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(got.status).toBe(200);
    const parsed = parseSseText(got.text);
    expect(parsed.comments.filter((c) => c === ' heartbeat').length).toBeGreaterThanOrEqual(1);
    expect(parsed.events.map((e) => e.id)).toEqual([JSON.parse(line).buildId]);
    builds = (await s.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[];
  });

  it('the eventsource client receives the existing builds and then the live ones', async () => {
    const ids: string[] = [];
    const es = new EventSource(`${s.base}${V2}/builds/since/0?stream=1`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: s.bearer } }),
    });
    const target = builds.length + 2;
    const all = new Promise<void>((resolve) =>
      es.addEventListener('Build', (e) => {
        ids.push((e as MessageEvent).lastEventId);
        if (ids.length === target) resolve();
      }),
    );
    await waitFor(() => ids.length >= builds.length, `the ${builds.length} stored builds on the event stream`, 20_000);
    const lines = [...demoBuilds({ builds: 2, seed: 777 })];
    await s.store.ingestNdjson(lines.join('\n'));
    await all;
    es.close();
    expect(ids).toEqual([...builds.map((b) => b.id), ...lines.map((l) => JSON.parse(l).buildId as string)]);
    builds = (await s.store.listBuilds({ visibility: SEE_EVERYTHING })) as BuildSummary[];
  });
});

describe('query', () => {
  it('filters the listings with the advanced search syntax', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0?query=${encodeURIComponent('buildTool:jsbuild')}`, auth());
    const expected = builds.filter((b) => b.toolType === 'jsbuild');
    expect(expected.length).toBeGreaterThan(0);
    expect(parseSseText(r.text).events.map((e) => e.id)).toEqual(expected.map((b) => b.id));
    const v1 = await rawGet(s.port, `${V1}/builds/since/0?query=${encodeURIComponent('buildTool:jsbuild')}`, auth());
    expect(v1.status).toBe(204); // v1 shows native builds only: nothing matches
  });

  it('answers 400 with diagnostics when the query does not parse', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0?query=${encodeURIComponent('buildTool:(')}`, auth());
    expect(r.status).toBe(400);
    const doc = JSON.parse(r.text) as { detail: string; diagnostics: { code: string; start: number; message: string }[] };
    expect(doc.detail).toMatch(/Invalid query/);
    expect(doc.diagnostics.length).toBeGreaterThan(0);
    expect(doc.diagnostics[0]).toHaveProperty('message');
  });
});

describe('authentication and CORS', () => {
  it('401 without or with wrong credentials, as problem documents', async () => {
    const none = await rawGet(s.port, `${V2}/builds/since/0`);
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toMatch(/problem\+json/);
    expect(none.headers['www-authenticate']).toMatch(/Bearer/);
    const wrong = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: 'Bearer bsk_' + 'x'.repeat(40) });
    expect(wrong.status).toBe(401);
    const badPw = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: `Basic ${Buffer.from('exporter:nope').toString('base64')}` });
    expect(badPw.status).toBe(401);
  });

  it('403 without the Export API permission', async () => {
    const u = await s.addUser('reader', ['accessBuildDataViaApi']);
    const r = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: u.bearer });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text)).toMatchObject({ status: 403, title: 'Forbidden' });
    expect(JSON.parse(r.text).detail).toMatch(/Export API/);
  });

  it('Basic works for password users and carries no CORS headers', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: s.basic, Origin: 'https://dash.example' });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('Bearer (key, base64 of the key, token) carries CORS headers, also on errors', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: s.bearer, Origin: 'https://dash.example' });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBe('https://dash.example');
    expect(r.headers['vary']).toMatch(/Origin/);
    const b64 = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: `Bearer ${Buffer.from(s.key).toString('base64')}` });
    expect(b64.status).toBe(200);
    expect(b64.headers['access-control-allow-origin']).toBe('*');
    const token = await s.auth.tokens.issue({ user: 'exporter', permissions: ['exportData'], projects: null, expiresAt: Date.now() + 3_600_000 } as never);
    const t = await rawGet(s.port, `${V2}/build/${builds[0]!.id}/events`, { Authorization: `Bearer ${token}`, Origin: 'https://dash.example' });
    expect(t.status).toBe(200);
    expect(t.headers['access-control-allow-origin']).toBe('https://dash.example');
    const e204 = await rawGet(s.port, `${V2}/builds/since/now`, { Authorization: s.bearer, Origin: 'https://dash.example' });
    expect(e204.status).toBe(204);
    expect(e204.headers['access-control-allow-origin']).toBe('https://dash.example');
    const e400 = await rawGet(s.port, `${V2}/builds/since/nope`, { Authorization: s.bearer, Origin: 'https://dash.example' });
    expect(e400.status).toBe(400);
    expect(e400.headers['access-control-allow-origin']).toBe('https://dash.example');
  });

  it('answers the CORS preflight', async () => {
    const r = await rawGet(s.port, `${V2}/builds/since/0?stream`, {
      Origin: 'https://dash.example',
      'Access-Control-Request-Method': 'GET',
      'Access-Control-Request-Headers': 'authorization, last-event-id',
    }, { method: 'OPTIONS' });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('https://dash.example');
    expect(r.headers['access-control-allow-methods']).toMatch(/GET/);
    expect(r.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(r.headers['access-control-allow-headers']).toMatch(/Last-Event-ID/);
  });

  it('applies project visibility', async () => {
    const project = 'billing';
    const all = (await s.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: false })) as BuildSummary[];
    const visible = all.filter((b) => b.project === project);
    expect(visible.length).toBeGreaterThan(0);
    expect(visible.length).toBeLessThan(all.length);
    const u = await s.addUser('billing-team', ['exportData'], [project]);
    const r = await rawGet(s.port, `${V2}/builds/since/0`, { Authorization: u.bearer });
    expect(parseSseText(r.text).events.map((e) => e.id)).toEqual(visible.map((b) => b.id));
    const hidden = all.find((b) => b.project !== project)!;
    expect((await rawGet(s.port, `${V2}/build/${hidden.id}/events`, { Authorization: u.bearer })).status).toBe(404);
  });
});
