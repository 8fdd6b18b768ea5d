// `buildscope serve`, `user add` and `access-key create` as real processes.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Each command is a fresh Node process (the compiled CLI): slow to start on a busy machine.
vi.setConfig({ testTimeout: 240_000 });
import { decodeJwt } from 'jose';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';
import { basic, bearer, buildId, buildLine } from './support.js';
import { CLI, printedAccessKey, serve, serverChildren } from '../support/serve-cli.js';

function run(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('buildscope serve on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates an admin with a password and an access key on a fresh data dir, loads demo builds, prints where to go', async () => {
    const s = await serve(['--data', dir, '--demo', '25']);
    try {
      const created = s.lines.find((l) => l.startsWith('Created user'))!;
      const m = /Created user 'admin' with password (\S+) and access key (bsk\S+) /.exec(created);
      expect(m).not.toBeNull();
      const [, password, key] = m!;
      const go = s.lines.find((l) => l.startsWith('Buildscope is running at'))!;
      expect(go).toContain('Authorization: Bearer');
      const builds = (await (await fetch(`${s.url}/api/builds?since=0`, { headers: { authorization: bearer(key!) } })).json()) as unknown[];
      expect(builds).toHaveLength(25);
      expect((await fetch(`${s.url}/api/builds?maxBuilds=1`, { headers: { authorization: basic('admin', password!) } })).status).toBe(200);
      writeFileSync(join(dir, 'key'), key!);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it('prints no credentials on a later start and keeps the data', async () => {
    const s = await serve(['--data', dir, '--demo', '25']);
    try {
      expect(s.lines.some((l) => l.startsWith('Created user'))).toBe(false);
      expect(s.lines.find((l) => l.startsWith('Buildscope is running at'))).toContain('access-key create');
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it('user add and access-key create manage credentials; the key prints alone', async () => {
    const add = run(['user', 'add', 'carol', '--password', 'secret-1', '--permissions', 'accessBuildDataViaApi,publishScan', '--projects', 'app', '--data', dir]);
    expect(add.status, add.stderr).toBe(0);
    expect(add.stdout).toContain('carol');
    const dup = run(['user', 'add', 'carol', '--password', 'x', '--data', dir]);
    expect(dup.status).not.toBe(0);
    expect(dup.stderr).toMatch(/already exists/);
    const bad = run(['user', 'add', 'dave', '--password', 'x', '--permissions', 'fly', '--data', dir]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown permission fly/);
    const created = run(['access-key', 'create', 'carol', '--expires-in-days', '2', '--data', dir]);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^bsk[a-z2-7]{52}\n$/);
    expect(run(['access-key', 'create', 'nobody', '--data', dir]).status).not.toBe(0);
    expect(run(['access-key', 'create', 'carol', '--expires-in-days', 'soon', '--data', dir]).status).not.toBe(0);

    const s = await serve(['--data', dir]);
    try {
      const key = created.stdout.trim();
      const r = await fetch(`${s.url}/api/auth/token?expiresInHours=24`, { method: 'POST', headers: { authorization: bearer(key) } });
      expect(r.status).toBe(200);
      const claims = decodeJwt(await r.text());
      expect(claims['proj']).toEqual(['app']);
      // Expires in 2 days, so a 3-day... token is capped by 24 h anyway; but the key's expiry is honoured:
      const long = await fetch(`${s.url}/api/auth/token?expiresInHours=25`, { method: 'POST', headers: { authorization: bearer(key) } });
      expect(long.status).toBe(400);
    } finally {
      await s.stop();
    }
  });

  it('--workers 2 runs two server processes on one port that serve the same data, and stops them all', async () => {
    const wdir = mkdtempSync(join(tmpdir(), 'buildscope-workers-'));
    const s = await serve(['--data', wdir, '--demo', '20', '--workers', '2']);
    let stopped = false;
    try {
      // The primary prepared the data once and prints once, when both workers listen.
      expect(s.lines.filter((l) => l.startsWith('Created user'))).toHaveLength(1);
      expect(s.lines.filter((l) => l.startsWith('Buildscope is running at'))).toHaveLength(1);
      const key = printedAccessKey(s);
      const workers = serverChildren(s.child.pid!);
      expect(workers).toHaveLength(2);
      // Whichever process answers, it serves the same builds, also one ingested through another.
      const stored = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { authorization: bearer(key), 'content-type': 'application/x-ndjson' }, body: `${buildLine({ id: buildId(777) })}\n` });
      expect(stored.status).toBe(200);
      for (let i = 0; i < 8; i++) {
        const r = await fetch(`${s.url}/api/builds?since=0&maxBuilds=1000`, { headers: { authorization: bearer(key) } });
        expect(((await r.json()) as unknown[]).length).toBe(21);
      }
      // A worker that dies is replaced, and the server keeps answering.
      process.kill(workers[0]!, 'SIGKILL');
      let now = workers;
      // Until the primary has started a new worker in its place.
      await expect
        .poll(() => {
          now = serverChildren(s.child.pid!);
          return !now.includes(workers[0]!) && now.length === 2;
        }, { timeout: 120_000, interval: 100 })
        .toBe(true);
      expect(now).toHaveLength(2);
      expect(now).not.toContain(workers[0]);
      expect((await fetch(`${s.url}/api/builds?maxBuilds=1`, { headers: { authorization: bearer(key) } })).status).toBe(200);
      expect(await s.stop()).toBe(0);
      stopped = true;
      for (const pid of now) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      if (!stopped) await s.stop();
      rmSync(wdir, { recursive: true, force: true });
    }
  });

  it('--workers: when the workers cannot listen, the server stops with status 1 instead of restarting them', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = spawnSync(process.execPath, [...CLI, 'serve', '--data', dir, '--port', String(port), '--workers', '2'], {
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' },
      });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/could not start/);
    } finally {
      taken.close();
    }
  });

  it('refuses bad options with a clear message', () => {
    const both = run(['serve', '--data', dir, '--db', 'postgres://x/y']);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/either --data or --db/);
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'server:\n  port: "high"\n');
    const r = run(['serve', '--config', file]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/server\.port: must be an integer, found string "high" \(line 2, column 9\)/);
    for (const n of ['0', '65', 'two']) {
      const w = run(['serve', '--data', dir, '--workers', n]);
      expect(w.status, n).toBe(2);
      expect(w.stderr).toBe(`buildscope serve: --workers: not a number of processes from 1 to 64: ${n}\n`);
    }
  });
});

describe.skipIf(!pgAvailable())('two buildscope serve processes over one PostgreSQL database', () => {
  it('share users, keys, tokens and builds, and wake each other’s long polls', async () => {
    const db = (await createTestDatabase())!;
    const a = await serve(['--db', db.url]);
    const b = await serve(['--db', db.url]);
    try {
      const created = a.lines.find((l) => l.startsWith('Created user')) ?? b.lines.find((l) => l.startsWith('Created user'));
      expect(created).toBeDefined();
      // Exactly one of the two created the administrator.
      expect([a, b].filter((s) => s.lines.some((l) => l.startsWith('Created user')))).toHaveLength(1);
      const key = /access key (bsk\S+) /.exec(created!)![1]!;
      const token = await (await fetch(`${a.url}/api/auth/token`, { method: 'POST', headers: { authorization: bearer(key) } })).text();
      const waiting = fetch(`${a.url}/api/builds?maxWaitSecs=10`, { headers: { authorization: bearer(token) } });
      // Until a's long-poll found nothing and waits: a build stored from then on wakes it.
      const waiters = async () => /^buildscope_new_build_waiters (\d+)$/m.exec(await (await fetch(`${a.url}/metrics`, { headers: { authorization: bearer(key) } })).text())?.[1];
      await expect.poll(waiters, { timeout: 60_000, interval: 20 }).toBe('1');
      const ingest = await fetch(`${b.url}/api/builds`, {
        method: 'POST',
        headers: { authorization: bearer(token), 'content-type': 'application/x-ndjson' },
        body: buildLine({ id: buildId(7) }) + '\n',
      });
      expect(ingest.status).toBe(200);
      const listed = (await (await waiting).json()) as { id: string }[];
      expect(listed.map((x) => x.id)).toEqual([buildId(7)]);
    } finally {
      await a.stop();
      await b.stop();
      await db.drop();
    }
  });
});
