// Retention over real HTTP: a deleted build answers 404 "build deleted" (to callers who could see
// it), an export stream resuming at a deleted build goes on with the next one, the retention job of
// a started server deletes by age and by free disk space, and under the reject threshold ingest
// answers 507.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { SEE_EVERYTHING, type BuildWithAttributes } from '../../src/store/types.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';
import { buildId, buildLine, newLocation, startTestServer } from './support.js';
import { parseRetentionConfig } from '../../src/retention/config.js';
import { waitFor } from '../support/wait.js';

const DAY = 86_400_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

describe.each(dialects)('deleted builds over HTTP on $name', ({ name, skip }) => {
  it.skipIf(skip)('GET /api/builds/{id} answers 404 build-deleted; an export stream from a deleted build goes on with the next', async () => {
    const s = await startTestServer(await newLocation(name), { plugins: [exportPlugin] });
    try {
      const admin = await s.user('root', ['accessBuildDataViaApi', 'publishScan', 'exportData']);
      const ids = [1, 2, 3, 4].map(buildId);
      const r = await s.ingest(
        ids.map((id, i) => buildLine({ id, project: i % 2 === 0 ? 'alpha' : 'beta', start: 1_749_000_000_000 + i * DAY })),
        `Bearer ${admin}`,
      );
      expect(r.status).toBe(200);
      const gone = await s.store.deleteBuilds({ kind: 'oldest' }, 2);
      expect(gone.map((g) => g.id)).toEqual(ids.slice(0, 2));

      const deleted = await s.get(`/api/builds/${ids[1]}`, `Bearer ${admin}`);
      expect(deleted.status).toBe(404);
      expect(deleted.headers.get('content-type')).toContain('application/problem+json');
      const body = (await deleted.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ type: 'urn:buildscope:problem:build-deleted', title: 'Build deleted', status: 404 });
      expect(String(body['detail'])).toContain('deleted');
      // A caller who could not have seen the build learns nothing about it.
      const alphaOnly = await s.user('alice', ['accessBuildDataViaApi'], { projects: ['alpha'] });
      const hidden = (await (await s.get(`/api/builds/${ids[1]}`, `Bearer ${alphaOnly}`)).json()) as Record<string, unknown>;
      expect(hidden).toMatchObject({ type: 'urn:buildscope:problem:not-found', status: 404 });
      const never = (await (await s.get(`/api/builds/${buildId(99)}`, `Bearer ${admin}`)).json()) as Record<string, unknown>;
      expect(never['type']).toBe('urn:buildscope:problem:not-found');
      // The listing from a deleted build continues with the next available one.
      const page = (await (await s.get(`/api/builds?fromBuild=${ids[0]}`, `Bearer ${admin}`)).json()) as { id: string }[];
      expect(page.map((b) => b.id)).toEqual(ids.slice(2));
      // So does an export stream, from its path or from Last-Event-ID.
      const exported = await fetch(`${s.url}/build-export/v2/builds/sinceBuild/${ids[0]}`, { headers: { authorization: `Bearer ${admin}` } });
      expect(exported.status).toBe(200);
      const text = await exported.text();
      expect([...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1])).toEqual(ids.slice(2));
      const resumed = await fetch(`${s.url}/build-export/v2/builds/since/0`, { headers: { authorization: `Bearer ${admin}`, 'last-event-id': ids[1]! } });
      expect([...(await resumed.text()).matchAll(/^id: (.*)$/gm)].map((m) => m[1])).toEqual(ids.slice(2));
    } finally {
      await s.close();
    }
  });
});

const logger = createLogger('test', 'silent');

/** Log lines of the servers started by `started` (pino JSON), to check what the job reports. */
const logged: { msg: string; deleted?: number }[] = [];
const capture = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as { msg: string }) });

async function started(retention: Record<string, unknown>, demo: number, url?: string): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-retention-'));
  dirs.push(dir);
  return startServer({
    config: parseConfig({ server: { port: 0 }, database: url !== undefined ? { url } : { data: join(dir, 'data') }, retention }),
    demo,
    logger: capture,
    print: () => undefined,
    retentionIntervalMs: 50,
  });
}

const until = (check: () => Promise<boolean>, what: string) => waitFor(check, what, 30_000, 50);

describe('the retention job of serve', () => {
  it.each(dialects)('deletes the builds that started more than maxAgeDays ago, and only those ($name)', async ({ name, skip }) => {
    if (skip) return;
    const pg = name === 'postgres' ? await createTestDatabase() : undefined;
    const s = await started({ maxAgeDays: 10 }, 60, pg?.url);
    try {
      const now = Date.now();
      const all = async () => (await s.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
      await until(async () => (await all()).every((b) => Number(b.attributes['buildStartTime']) >= now - 10 * DAY - 60_000), 'old builds to go');
      const left = await all();
      // The demo builds start over 30 days: about a third is younger than 10 days.
      expect(left.length).toBeGreaterThan(5);
      expect(left.length).toBeLessThan(40);
      expect(left.every((b) => Number(b.attributes['buildStartTime']) >= Date.now() - 10 * DAY - 120_000)).toBe(true);
      // The job said what it did, with the number deleted (logged once its pass ends).
      const done = (l: { msg: string }) => /^retention: deleted \d+ builds that started before/.test(l.msg);
      await until(async () => logged.some(done), 'the log line of the pass');
      const total = logged.filter((l) => /^retention: deleted \d+ builds that started before/.test(l.msg)).reduce((a, l) => a + (l.deleted ?? 0), 0);
      expect(total).toBe(60 - left.length);
      logged.length = 0;
    } finally {
      await s.close();
      await pg?.drop();
    }
  });

  it('deletes the oldest builds while free disk space is under the threshold, and refuses ingest with 507 under the reject threshold', async () => {
    // No disk here is 99.99% free: the job deletes every build, oldest first, and ingest is refused.
    const s = await started({ minFreeDiskPercent: 99.99, rejectBelowFreeDiskPercent: 99.99 }, 30);
    try {
      await until(async () => (await s.store.latestSeq()) === 0, 'every build to go');
      const r = await fetch(`${s.url}/api/builds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.created!.accessKey}`, 'content-type': 'application/x-ndjson' },
        body: buildLine({ id: buildId(7) }) + '\n',
      });
      expect(r.status).toBe(507);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(await r.json()).toMatchObject({ status: 507, title: 'Insufficient Storage', detail: expect.stringContaining('rejectBelowFreeDiskPercent') });
      expect(await s.store.buildState(buildId(7), SEE_EVERYTHING)).toBe('missing');
      expect(logged.some((l) => l.msg.startsWith('retention: refusing ingest (507)'))).toBe(true);
      await until(async () => logged.some((l) => /^retention: free disk space is still .* with no build left to delete/.test(l.msg)), 'the warning');
      logged.length = 0;
    } finally {
      await s.close();
    }
  });

  it('accepts ingest when free space is above the reject threshold', async () => {
    const s = await started({ rejectBelowFreeDiskPercent: 0.001 }, 0);
    try {
      const r = await fetch(`${s.url}/api/builds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.created!.accessKey}`, 'content-type': 'application/x-ndjson' },
        body: buildLine({ id: buildId(8) }) + '\n',
      });
      expect(r.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('the retention section', () => {
  it('refuses bad settings with a message that names them', () => {
    const data = { data: '/tmp/x' };
    const pg = { url: 'postgres://localhost/x' };
    for (const [raw, db, message] of [
      [{ maxAgeDays: 0 }, data, /maxAgeDays/],
      [{ maxAgeDays: 1.5 }, data, /maxAgeDays/],
      [{ minFreeDiskPercent: 100 }, data, /minFreeDiskPercent/],
      [{ rejectBelowFreeDiskPercent: 'low' }, data, /rejectBelowFreeDiskPercent/],
      [{ minFreeDiskPercent: 5, rejectBelowFreeDiskPercent: 10 }, data, /must not exceed/],
      [{ minFreeDiskPercent: 5 }, pg, /PostgreSQL/],
      [{ maxAge: 3 }, data, /retention\.maxAge: unknown property \(did you mean "maxAgeDays"\?\)/],
      ['90d', data, /retention: must be an object, found string "90d"/],
    ] as const) {
      expect(() => parseRetentionConfig(raw, db), JSON.stringify(raw)).toThrow(message);
    }
    expect(parseRetentionConfig(undefined, data)).toEqual({});
    expect(parseRetentionConfig({ maxAgeDays: 90 }, pg)).toEqual({ maxAgeDays: 90 });
  });

  it('is checked before the database is opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-retention-'));
    dirs.push(dir);
    const config = parseConfig({ server: { port: 0 }, database: { data: join(dir, 'data') }, retention: { maxAgeDays: -1 } });
    await expect(startServer({ config, logger, print: () => undefined })).rejects.toThrow(/retention.maxAgeDays/);
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});
