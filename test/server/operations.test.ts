// Operations: Prometheus metrics (GET /metrics, permission readMetrics) counting real requests,
// ingest, open export streams and the database's size; liveness and readiness without
// credentials; on SQLite and PostgreSQL, against a server started as `serve` starts it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuth } from '../../src/auth/index.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { completeBuild, id } from '../store/support.js';

const logger = createLogger('test', 'silent');

/** The value of one sample of the Prometheus text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe.each(['sqlite', 'postgres'] as const)('operations (%s)', (dialect) => {
  let server: RunningServer;
  let admin: string;
  let reader: string;
  let dir: string | undefined;
  let pg: TestDatabase | undefined;

  beforeAll(async () => {
    if (dialect === 'postgres' && !pgAvailable()) return;
    let database: Record<string, string>;
    if (dialect === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'bs-ops-'));
      database = { data: dir };
    } else {
      pg = (await createTestDatabase())!;
      database = { url: pg.url };
    }
    const config = parseConfig({ server: { port: 0 }, database });
    server = await startServer({ config, logger, print: () => undefined });
    admin = `Bearer ${server.created!.accessKey}`;
    const auth = await openAuth(server.database, config);
    await auth.users.addUser({ name: 'reader', permissions: ['accessBuildDataViaApi', 'publishScan', 'exportData'] });
    reader = `Bearer ${(await auth.users.createAccessKey('reader', { expiresAt: Date.now() + 86_400_000 })).key}`;
  });

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await pg?.drop();
  });

  const metrics = async (): Promise<string> => {
    const r = await fetch(`${server.url}/metrics`, { headers: { authorization: admin } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    return r.text();
  };

  it.skipIf(dialect === 'postgres' && !pgAvailable())('answers liveness and readiness without credentials', async () => {
    for (const [path, status] of [['/health/live', 'live'], ['/health/ready', 'ready']] as const) {
      const r = await fetch(`${server.url}${path}`);
      expect(r.status, path).toBe(200);
      expect(await r.json()).toEqual({ status });
    }
  });

  it.skipIf(dialect === 'postgres' && !pgAvailable())('keeps /metrics to holders of readMetrics', async () => {
    const anonymous = await fetch(`${server.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toMatch(/problem\+json/);
    const other = await fetch(`${server.url}/metrics`, { headers: { authorization: reader } });
    expect(other.status).toBe(403);
  });

  it.skipIf(dialect === 'postgres' && !pgAvailable())('counts requests by route and status, ingest, open export streams and the database size', async () => {
    const before = await metrics();
    const okBefore = sample(before, 'buildscope_http_requests_total', { route: '/api/builds', method: 'GET', status: '200' }) ?? 0;
    const storedBefore = sample(before, 'buildscope_builds_stored_total') ?? 0;
    const rejectedBefore = sample(before, 'buildscope_builds_rejected_total') ?? 0;

    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api/builds?fromInstant=0`, { headers: { authorization: reader } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/builds?maxBuilds=abc`, { headers: { authorization: reader } })).status).toBe(400);
    const ids = [id(), id()];
    const ingest = await fetch(`${server.url}/api/builds`, {
      method: 'POST',
      headers: { authorization: admin, 'content-type': 'application/x-ndjson' },
      body: [...ids.map((b) => completeBuild(b)), '{"not":"a build"}'].join('\n'),
    });
    expect(ingest.status).toBeLessThan(300);

    // An export stream stays open until the client goes away.
    const stream = new AbortController();
    const open = await fetch(`${server.url}/build-export/v2/builds/since/0?stream`, { headers: { authorization: admin }, signal: stream.signal });
    expect(open.status).toBe(200);
    const during = await metrics();
    expect(sample(during, 'buildscope_export_streams_open')).toBe(1);
    // Once it has sent every build, it waits for a new one.
    await expect.poll(async () => sample(await metrics(), 'buildscope_new_build_waiters'), { timeout: 30_000 }).toBe(1);
    stream.abort();
    await expect(open.text()).rejects.toThrow();
    await expect.poll(async () => sample(await metrics(), 'buildscope_export_streams_open'), { timeout: 10_000 }).toBe(0);
    await expect.poll(async () => sample(await metrics(), 'buildscope_new_build_waiters'), { timeout: 10_000 }).toBe(0);

    const after = await metrics();
    expect(sample(after, 'buildscope_http_requests_total', { route: '/api/builds', method: 'GET', status: '200' })).toBe(okBefore + 3);
    expect(sample(after, 'buildscope_http_requests_total', { route: '/api/builds', method: 'GET', status: '400' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'buildscope_http_request_duration_seconds_count', { route: '/api/builds', method: 'GET', status: '200' })).toBe(okBefore + 3);
    expect(sample(after, 'buildscope_builds_stored_total')).toBe(storedBefore + 2);
    expect(sample(after, 'buildscope_builds_rejected_total')).toBe(rejectedBefore + 1);
    expect(sample(after, 'buildscope_database_size_bytes')).toBeGreaterThan(0);
    expect(sample(after, 'buildscope_process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
