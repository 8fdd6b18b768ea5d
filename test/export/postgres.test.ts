// Two server processes over one PostgreSQL database: a client streaming from one receives the
// builds published through the other within a second; a build still being stored answers 503
// on both; a third server mirrors from them over SQLite and answers the same searches.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSource } from 'eventsource';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { mirror } from '../../src/mirror/mirror.js';
import type { BuildEvent } from '../../src/store/types.js';
import { rawGet, startServer } from './harness.js';
import { parseSseText } from './sse-parse.js';
import { SEARCHES, search } from './searches.js';
import { CLI } from '../support/compiled-cli.js';

interface Proc {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  readonly port: number;
  readonly key?: string;
}

function serve(dbUrl: string): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, 'serve', '--db', dbUrl, '--port', '0'], {
      env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' },
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out} ${err}`)), 100_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /running at (http:\/\/[^/\s]+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        const key = /access key (bsk[A-Za-z0-9_-]+)/.exec(out)?.[1];
        resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port), ...(key ? { key } : {}) });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out} ${err}`)));
  });
}

function stop(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
    setTimeout(() => p.child.kill('SIGKILL'), 5000).unref();
  });
}

describe.skipIf(!pgAvailable())('two server processes over PostgreSQL', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let a: Proc;
  let b: Proc;
  let key: string;

  async function publish(proc: Proc, lines: readonly string[]): Promise<unknown[]> {
    const res = await fetch(`${proc.url}/api/builds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      body: lines.join('\n') + '\n',
    });
    expect(res.status).toBeLessThan(300);
    return (await res.json()) as unknown[];
  }

  beforeAll(async () => {
    db = (await createTestDatabase())!;
    a = await serve(db.url);
    b = await serve(db.url);
    key = a.key!;
    expect(key).toBeDefined();
    await publish(a, [...demoBuilds({ builds: 12, seed: 21 })]);
  }, 240_000);
  afterAll(async () => {
    await Promise.all([stop(a), stop(b)]);
    await db?.drop();
  });

  it('a stream on one process receives builds published through the other within a second', async () => {
    // The server sends the headers of a stream once it is open, its start ("now") fixed.
    let connected!: () => void;
    const headers = new Promise<void>((r) => (connected = r));
    const got = rawGet(b.port, '/build-export/v2/builds/since/now?stream', { Authorization: `Bearer ${key}`, 'Accept-Encoding': 'gzip' }, {
      until: (t) => (connected(), parseSseText(t).events.length >= 1),
      timeoutMs: 60_000,
    });
    await headers;
    const line = [...demoBuilds({ builds: 1, seed: 31 })][0]!;
    let arrived = 0;
    const timed = got.then((r) => ((arrived = Date.now()), r));
    await publish(a, [line]);
    // The build is available once the publishing request has been answered.
    const available = Date.now();
    const r = await timed;
    const latency = Math.max(0, arrived - available);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(parseSseText(r.text).events.map((e) => e.id)).toEqual([JSON.parse(line).buildId]);
    expect(latency).toBeLessThan(1000);
  });

  it('the eventsource client on one process sees the listing, then live builds from the other', async () => {
    const ids: string[] = [];
    const es = new EventSource(`${a.url}/build-export/v2/builds/since/0?stream`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${key}` } }),
    });
    es.addEventListener('Build', (e) => ids.push((e as MessageEvent).lastEventId));
    await expect.poll(() => ids.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(13);
    const lines = [...demoBuilds({ builds: 3, seed: 41 })];
    await publish(b, lines);
    await expect.poll(() => ids.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(16);
    es.close();
    expect(ids.slice(13)).toEqual(lines.map((l) => JSON.parse(l).buildId as string));
  });

  it('a build still being stored answers 503 with Retry-After on both processes, then streams', async () => {
    const build = JSON.parse([...demoBuilds({ builds: 1, seed: 51 })][0]!) as { buildId: string; events: BuildEvent[] };
    const finished = build.events.filter((e) => e.type.eventType === 'BuildFinished');
    const first = { ...build, events: build.events.filter((e) => e.type.eventType !== 'BuildFinished') };
    await publish(a, [JSON.stringify(first)]);
    for (const p of [a, b]) {
      const r = await rawGet(p.port, `/build-export/v2/build/${build.buildId}/events`, { Authorization: `Bearer ${key}` });
      expect(r.status).toBe(503);
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    await publish(b, [JSON.stringify({ ...build, events: finished })]);
    const r = await rawGet(a.port, `/build-export/v2/build/${build.buildId}/events`, { Authorization: `Bearer ${key}` });
    expect(r.status).toBe(200);
    expect(parseSseText(r.text).events).toHaveLength(1 + build.events.length);
  });

  it('a SQLite server mirrored from them answers the same searches', async () => {
    const local = await startServer();
    try {
      const result = await mirror(local.store, { source: b.url, token: key });
      expect(result.rejected).toBe(0);
      expect(result.builds).toBe(17);
      const mine = await local.addUser('searcher', ['accessBuildDataViaApi']);
      for (const q of SEARCHES) {
        expect(await search(local.base, mine.bearer, q), q).toEqual(await search(a.url, `Bearer ${key}`, q));
      }
    } finally {
      await local.close();
    }
  });
});
