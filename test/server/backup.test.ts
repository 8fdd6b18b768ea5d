// `buildscope backup`: a consistent copy of a live SQLite data directory, taken while the server
// runs and keeps ingesting; restored (the original wiped, a server started on the copy), the same
// searches answer the same. Refusals are one line and create nothing.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { completeBuild, ev, id, line } from '../store/support.js';
import { CLI } from '../support/compiled-cli.js';

const logger = createLogger('test', 'silent');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'bs-backup-'));
  dirs.push(d);
  return d;
}

function cli(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => done({ status, stderr }));
  });
}

const SEARCHES = ['', 'project:alpha', 'project:beta', 'tag:nightly', '-tag:nightly', 'buildOutcome:failed'];

async function answers(server: RunningServer, key: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const q of SEARCHES) {
    const r = await fetch(`${server.url}/api/builds?fromInstant=0&maxBuilds=1000&query=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status, q).toBe(200);
    out[q] = ((await r.json()) as { id: string }[]).map((b) => b.id).sort();
  }
  return out;
}

function someBuilds(n: number, project: string): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = id();
    lines.push(
      i % 3 === 0
        ? line({ buildId: b, events: [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: project }), ev('UserTag', { tag: 'nightly' }), ev('BuildFinished', { outcome: 'failed', failures: [] })] })
        : completeBuild(b, project),
    );
  }
  return lines.join('\n');
}

describe('buildscope backup', () => {
  it('copies a live data directory while builds are ingested; the copy, restored, answers every search the same', async () => {
    const data = join(tempDir(), 'data');
    const config = (dir: string) => parseConfig({ server: { port: 0 }, database: { data: dir } });
    let server = await startServer({ config: config(data), logger, print: () => undefined });
    const key = server.created!.accessKey;
    const post = (body: string) =>
      fetch(`${server.url}/api/builds`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' }, body });
    expect((await post(someBuilds(300, 'alpha'))).status).toBeLessThan(300);
    // A file of the data directory next to the database is copied too.
    mkdirSync(join(data, 'attestations'), { recursive: true });
    writeFileSync(join(data, 'attestations', 'marker.json'), '{"kept":true}');

    // The backup runs while another ingest is under way; it holds a snapshot of one moment.
    const dest = join(tempDir(), 'copy');
    const [backup, ingest] = await Promise.all([cli(['backup', dest, '--data', data]), post(someBuilds(300, 'beta'))]);
    expect(ingest.status).toBeLessThan(300);
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stderr).toMatch(/backup: copied the database \([\d.]+ MB\) and .*attestations.* to /);
    expect(backup.stderr).toContain(`--data ${dest}`);
    expect(readdirSync(dest)).toEqual(expect.arrayContaining(['attestations', 'buildscope.db']));
    expect(readdirSync(dest).filter((f) => f.startsWith('buildscope.db'))).toEqual(['buildscope.db']);

    // Whatever the copy holds is consistent: a later backup of the quiet server is complete.
    const final = join(tempDir(), 'final');
    expect((await cli(['backup', final, '--data', data])).status).toBe(0);
    const expected = await answers(server, key);
    expect(expected['']!.length).toBe(600);
    await server.close();

    // Restore: wipe the original, start on the copy.
    rmSync(data, { recursive: true, force: true });
    server = await startServer({ config: config(final), logger, print: () => undefined });
    try {
      expect(server.created).toBeUndefined();
      expect(await answers(server, key)).toEqual(expected);
      expect(existsSync(join(final, 'attestations', 'marker.json'))).toBe(true);
    } finally {
      await server.close();
    }

    // The copy taken during the ingest opens too, with the first 300 builds and whole builds only.
    server = await startServer({ config: config(dest), logger, print: () => undefined });
    try {
      const during = await answers(server, key);
      expect(during['project:alpha']).toEqual(expected['project:alpha']);
      expect(during['']!.length === 300 || during['']!.length === 600).toBe(true);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('refuses in one line and creates nothing: no database at --data, a non-empty destination, a PostgreSQL URL', async () => {
    const root = tempDir();
    const missing = await cli(['backup', join(root, 'out'), '--data', join(root, 'nothing-here')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(/^buildscope backup: no Buildscope database in /);
    expect(existsSync(join(root, 'out'))).toBe(false);
    expect(existsSync(join(root, 'nothing-here'))).toBe(false);

    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'keep.txt'), 'x');
    const data = join(root, 'data');
    const s = spawnSync(process.execPath, [...CLI, 'ingest', '-', '--data', data], { input: completeBuild(id()), encoding: 'utf8' });
    expect(s.status, s.stderr).toBe(0);
    const nonEmpty = await cli(['backup', busy, '--data', data]);
    expect(nonEmpty.status).toBe(2);
    expect(nonEmpty.stderr).toMatch(/exists and is not an empty directory/);
    expect(readdirSync(busy)).toEqual(['keep.txt']);

    const pg = await cli(['backup', join(root, 'pg'), '--db', 'postgres://localhost/buildscope']);
    expect(pg.status).toBe(2);
    expect(pg.stderr).toMatch(/pg_dump/);
    expect(existsSync(join(root, 'pg'))).toBe(false);
  }, 120_000);
});
