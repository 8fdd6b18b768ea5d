// The README's command-line steps as a new user runs them, in order, against a real server:
// serve with demo builds, demo-data into a file, ingest it, search, mirror.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CLI_ARGS, cli, cliAsync, serveCli, type Serving } from './support.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

const dir = mkdtempSync(join(tmpdir(), 'bs-cli-new-user-'));
const data = join(dir, 'data');
let server: Serving;

beforeAll(async () => {
  // `npm start` is `serve --demo 5000`: the same, smaller.
  server = await serveCli(['--demo', '30', '--data', data]);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the README's steps, in order", () => {
  it('demo-data > builds.ndjson && ingest builds.ndjson stores every line beside the demo builds', () => {
    const demo = cli(['demo-data', '--builds', '60']);
    expect(demo.status, demo.stderr).toBe(0);
    const seed = /demo-data: seed (\d+) \(--seed \1 makes the same builds again\)/.exec(demo.stderr);
    expect(seed, demo.stderr).not.toBeNull();
    const file = join(dir, 'builds.ndjson');
    writeFileSync(file, demo.stdout);
    const ingest = cli(['ingest', file, '--data', data]);
    expect(ingest.stderr).toMatch(/^60 stored \(\d+ of them still incomplete\), 0 unchanged, 0 rejected in /m);
    expect(ingest.status).toBe(0);
    // The seed it printed makes the same builds again.
    const again = cli(['demo-data', '--builds', '60', '--seed', seed![1]!]);
    expect(again.stdout.split('\n').map((l) => l.slice(0, 30))).toEqual(demo.stdout.split('\n').map((l) => l.slice(0, 30)));
  });

  it('ingest - from a pipe prints a progress line with counts and rate', () => {
    const lines = cli(['demo-data', '--builds', '300', '--seed', '77']).stdout;
    const r = cli(['ingest', '-', '--data', data, '--batch-size', '100', '--progress-interval', '0'], { input: lines });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^ingest: 100 lines so far \(100 stored, 0 unchanged, 0 rejected\), \d+ builds\/s$/m);
    expect(r.stderr).toMatch(/^ingest: 300 lines so far \(300 stored, 0 unchanged, 0 rejected\), \d+ builds\/s$/m);
  });

  it('ingest - with standard error on a terminal shows counts and rate', () => {
    const file = join(dir, 'tty.ndjson');
    writeFileSync(file, cli(['demo-data', '--builds', '200', '--seed', '78']).stdout);
    const command = [process.execPath, ...CLI_ARGS, 'ingest', '-', '--data', data, '--batch-size', '50'].map((a) => `'${a}'`).join(' ');
    // util-linux `script` gives the command a pseudo-terminal; standard input stays the file.
    const r = spawnSync('script', ['-qefc', `${command} < '${file}'`, '/dev/null'], { encoding: 'utf8', timeout: 180_000 });
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/ingest \| 200 lines \(200 stored, 0 unchanged, 0 rejected\) \| \d+ builds\/s/);
  });

  it('a search query may start with - (and -- works too)', () => {
    const all = JSON.parse(cli(['search', '', '--json', '--limit', '1000', '--data', data]).stdout) as { attributes: Record<string, unknown> }[];
    const user = String(all[0]!.attributes['user']);
    const expected = all.filter((b) => String(b.attributes['user']) !== user).length;
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(all.length);
    for (const args of [
      ['search', `-user:${user}`, '--json', '--limit', '1000', '--data', data],
      ['search', '--json', '--limit', '1000', '--data', data, `-user:${user}`],
      ['search', '--json', '--limit', '1000', '--data', data, '--', `-user:${user}`],
    ]) {
      const r = cli(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect((JSON.parse(r.stdout) as unknown[]).length).toBe(expected);
    }
    const explain = cli(['explain', '-buildOutcome:failed', '--no-plan']);
    expect(explain.status, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(/^not$/m);
    // An option the command does not have is still an error.
    const bad = cli(['search', 'buildOutcome:failed', '--limt', '3', '--data', data]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("unknown option '--limt'");
  });

  it('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = cli(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it('timestamps with 6 or 9 fraction digits work in search, in the API and in mirror --since', async () => {
    const r = cli(['search', 'buildStartTime>2020-01-01T00:00:00.123456Z buildStartTime<2100-01-01T00:00:00.123456789+01:00', '--json', '--limit', '5', '--data', data]);
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as unknown[]).length).toBe(5);
    const api = await fetch(`${server.url}/api/builds?maxBuilds=3&since=0&query=${encodeURIComponent('buildStartTime>2020-01-01T00:00:00.123456')}`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    expect(api.status, await api.clone().text()).toBe(200);
    expect(((await api.json()) as unknown[]).length).toBe(3);
    const mirror = await cliAsync(['mirror', server.url, '--token', server.key, '--since', '2020-01-01T00:00:00.123456', '--data', join(dir, 'since-mirror'), '--no-progress']);
    expect(mirror.status, mirror.stderr).toBe(0);
    // Every build the search saw (demo builds start within the last 30 days, after 2020).
    const available = (JSON.parse(cli(['search', '', '--json', '--limit', '100000', '--data', data]).stdout) as unknown[]).length;
    expect(mirror.stdout).toMatch(new RegExp(`^Mirrored ${available} builds \\(${available} new`));
  });
});

describe('mirror, tried as a new user would', () => {
  it('shows a total and stores everything', async () => {
    const r = await cliAsync(['mirror', server.url, '--token', server.key, '--data', join(dir, 'mirror'), '--concurrency', '4']);
    expect(r.status, r.stderr).toBe(0);
    const mirrored = /^Mirrored (\d+) builds \(\1 new, 0 already present, 0 failed\)/.exec(r.stdout);
    expect(mirrored, r.stdout).not.toBeNull();
    const n = mirrored![1]!;
    // The progress lines (not a terminal: log lines) name the total from the first one on. With
    // four builds in flight, the first line may already count more than one build.
    const first = r.stderr.split('\n').find((l) => l.includes('"msg":"mirrored '));
    expect(first, r.stderr).toMatch(new RegExp(`"builds":(\\d+),.*"total":${n},.*"msg":"mirrored \\1 of ${n} builds"`));
  });

  it('the export listing counts only when asked (Prefer: count=exact)', async () => {
    const url = `${server.url}/build-export/v2/builds/since/0`;
    const asked = await fetch(url, { headers: { authorization: `Bearer ${server.key}`, prefer: 'count=exact' } });
    const text = await asked.text();
    expect(asked.headers.get('preference-applied')).toBe('count=exact');
    expect(Number(asked.headers.get('buildscope-build-count'))).toBe(text.split('\n').filter((l) => l === 'event: Build').length);
    const plain = await fetch(url, { headers: { authorization: `Bearer ${server.key}` } });
    await plain.text();
    expect(plain.headers.get('buildscope-build-count')).toBeNull();
  });

  it('--after with a build the source does not have gets a clear message', async () => {
    const unknown = await cliAsync(['mirror', server.url, '--token', server.key, '--data', join(dir, 'mirror'), '--after', 'zzzzzzzzzzzzz']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('buildscope mirror: --after zzzzzzzzzzzzz: the source has no build zzzzzzzzzzzzz that this token can see');
    const malformed = await cliAsync(['mirror', server.url, '--token', server.key, '--data', join(dir, 'mirror'), '--after', 'nope']);
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toBe("buildscope mirror: --after needs a build ID (13 characters of 0-9 and a-z, as mirror printed it), got 'nope'\n");
  });

  it('an unreachable source: gives up after --give-up-after with the reason', async () => {
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((ok) => closed.close(() => ok()));
    const r = await cliAsync(['mirror', `http://127.0.0.1:${port}`, '--data', join(dir, 'unreachable'), '--give-up-after', '2']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^buildscope mirror: cannot reach http://127\\.0\\.0\\.1:${port}/build-export/v2/builds/since/0: connection refused \\(gave up after 2 s\\); --give-up-after sets how long to try$`, 'm'));
  });
});
