// The agents' shared Node side: settings (environment over config file), the spool and its flush
// against a real server on loopback, and the `agent` command's answers to bad input.

import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAgentSettings, AgentSettingsError } from '../../src/agents/settings.js';
import { flushSpool, spoolBuild, spooled } from '../../src/agents/spool.js';
import { gradleInitScript } from '../../src/agents/gradle.js';
import { agentSettings, sendBuild } from '../../src/agents/common-send.js';
import type { AgentBuild } from '../../src/agents/common-build.js';
import { bearer, newLocation, startTestServer, type TestServer } from '../support/server.js';
import { buildId, buildLine } from '../support/lines.js';
import { CLI } from '../support/compiled-cli.js';
import { waitFor } from '../support/wait.js';

let server: TestServer;
let key: string;
let dir: string;

beforeAll(async () => {
  server = await startTestServer(await newLocation('sqlite'));
  key = await server.user('ci', ['publishScan', 'accessBuildDataViaApi']);
  dir = mkdtempSync(join(tmpdir(), 'agent-spool-'));
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const fresh = (name: string) => join(dir, `${name}-${n++}`);
const listed = async (ids: readonly string[]) => {
  const r = await server.get(`/api/builds?fromInstant=0&maxBuilds=1000&query=${encodeURIComponent(ids.map((i) => `!project:${i}x`).join(' '))}`, bearer(key));
  const all = ((await r.json()) as { id: string }[]).map((b) => b.id);
  return all.filter((i) => ids.includes(i));
};

describe('agent settings', () => {
  it('take the environment over the config file, and the config file over nothing', () => {
    const d = fresh('settings');
    mkdirSync(d);
    writeFileSync(join(d, 'agent.properties'), '# mine\nserver = http://from-file:5080/\naccessKey=file-key\nspoolDir=/tmp/x\\ y\ntags=a,b\n');
    const fromFile = readAgentSettings({ BUILDSCOPE_AGENT_DIR: d });
    expect(fromFile).toMatchObject({ server: 'http://from-file:5080', accessKey: 'file-key', spoolDir: '/tmp/x y', configFile: join(d, 'agent.properties') });
    expect(fromFile.config['tags']).toBe('a,b');
    const fromEnv = readAgentSettings({ BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: 'https://scans.example.com', BUILDSCOPE_ACCESS_KEY: 'env-key', BUILDSCOPE_SPOOL_DIR: '/s' });
    expect(fromEnv).toMatchObject({ server: 'https://scans.example.com', accessKey: 'env-key', spoolDir: '/s' });
    const none = readAgentSettings({ BUILDSCOPE_AGENT_DIR: join(d, 'missing') });
    expect(none).toMatchObject({ server: undefined, accessKey: undefined, spoolDir: join(d, 'missing', 'spool') });
  });

  it('refuse a server address that is not an http(s) URL', () => {
    expect(() => readAgentSettings({ BUILDSCOPE_AGENT_DIR: fresh('x'), BUILDSCOPE_SERVER: 'scans.example.com' })).toThrow(AgentSettingsError);
  });
});

describe('the spool', () => {
  it('sends spooled builds once, moves a build the server rejects aside, and keeps all when the server is away', async () => {
    const spool = fresh('spool');
    const good = [buildId(9001), buildId(9002)];
    for (const id of good) spoolBuild(spool, id, buildLine({ id, project: 'spooled' }));
    const bad = buildId(9003);
    spoolBuild(spool, bad, JSON.stringify({ buildId: bad, toolType: 'nope', events: [] }));
    expect(spooled(spool)).toEqual([...good, bad].sort());

    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const away = await flushSpool(spool, { server: `http://127.0.0.1:${closed}`, accessKey: key });
    expect(away.sent).toEqual([]);
    expect(away.kept).toBe(3);
    expect(away.failure).toBe('ECONNREFUSED');

    const r = await flushSpool(spool, { server: server.url, accessKey: key });
    expect(r.sent).toEqual(good);
    expect(r.rejected.map((x) => x.buildId)).toEqual([bad]);
    expect(r.kept).toBe(0);
    expect(readdirSync(join(spool, 'rejected'))).toEqual([`${bad}.ndjson`]);
    expect(await listed(good)).toEqual(good);
    expect((await flushSpool(spool, { server: server.url, accessKey: key })).sent).toEqual([]);
  });

  it('keeps builds the server refuses to take from this key (an error, not a rejection)', async () => {
    const spool = fresh('spool');
    spoolBuild(spool, buildId(9010), buildLine({ id: buildId(9010) }));
    const r = await flushSpool(spool, { server: server.url, accessKey: 'not-a-key' });
    expect(r.failure).toMatch(/^HTTP 401/);
    expect(spooled(spool)).toEqual([buildId(9010)]);
  });

  it('leaves a fresh claim to its sender and takes back one left by a sender that died', async () => {
    const spool = fresh('spool');
    const id = buildId(9020);
    spoolBuild(spool, id, buildLine({ id }));
    renameSync(join(spool, `${id}.ndjson`), join(spool, `${id}.ndjson.sending.other`));
    const target = { server: server.url, accessKey: key };
    expect((await flushSpool(spool, target)).sent).toEqual([]);
    expect(spooled(spool)).toEqual([id]);
    // A claim's age is its ctime (set by the claiming rename, and not settable): move the clock on.
    const realNow = Date.now;
    Date.now = () => realNow() + 11 * 60_000;
    try {
      expect((await flushSpool(spool, target)).sent).toEqual([id]);
    } finally {
      Date.now = realNow;
    }
    expect(readdirSync(spool)).toEqual([]);
  });

  it('never sends a build twice when two senders flush at once (property)', async () => {
    let base = 10_000;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), async (count) => {
        const spool = fresh('race');
        const ids = Array.from({ length: count }, () => buildId(base++));
        for (const id of ids) spoolBuild(spool, id, buildLine({ id }));
        const target = { server: server.url, accessKey: key };
        const [a, b] = await Promise.all([flushSpool(spool, target, { claimant: 'a' }), flushSpool(spool, target, { claimant: 'b' })]);
        expect([...a.sent, ...b.sent].sort()).toEqual([...ids].sort());
        expect(a.sent.filter((id) => b.sent.includes(id))).toEqual([]);
        expect(spooled(spool)).toEqual([]);
      }),
      { numRuns: 6 },
    );
  });

  it('is one spool for every agent: a build the npm or Bazel side could not send is sent by agent flush, and the next send sends what the JVM agents left', async () => {
    const d = fresh('shared');
    mkdirSync(d);
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const asBuild = (id: string): AgentBuild => ({ ...(JSON.parse(buildLine({ id, project: 'shared' })) as AgentBuild) });
    // The settings file every agent reads: agent.properties in the agent directory.
    writeFileSync(join(d, 'agent.properties'), `server=http://127.0.0.1:${closed}\naccessKey=${key}\n`);
    const away = agentSettings({ HOME: d, BUILDSCOPE_AGENT_DIR: d });
    expect(away).toMatchObject({ server: `http://127.0.0.1:${closed}`, spoolDir: join(d, 'spool') });
    const npmBuild = buildId(9050);
    expect(await sendBuild(away, asBuild(npmBuild))).toMatchObject({ kind: 'spooled' });
    expect(readdirSync(join(d, 'spool'))).toEqual([`${npmBuild}.ndjson`]);
    // What `buildscope agent flush` does, with the same settings reader.
    const flushed = await cli(['agent', 'flush'], { BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key });
    expect(flushed.stderr).toContain('1 sent, 0 rejected, 0 still spooled');
    expect(await listed([npmBuild])).toEqual([npmBuild]);
    // A JVM agent's spooled build and an earlier version's <id>.json go with the next build that arrives.
    const jvmBuild = buildId(9051);
    const legacy = buildId(9052);
    spoolBuild(join(d, 'spool'), jvmBuild, buildLine({ id: jvmBuild }));
    writeFileSync(join(d, 'spool', `${legacy}.json`), buildLine({ id: legacy }));
    const next = buildId(9053);
    const up = agentSettings({ HOME: d, BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: server.url });
    expect(await sendBuild(up, asBuild(next))).toEqual({ kind: 'sent', link: `${server.url}/builds/${next}`, flushed: 2 });
    expect(await listed([jvmBuild, legacy, next])).toEqual(expect.arrayContaining([jvmBuild, legacy, next]));
    expect(readdirSync(join(d, 'spool'))).toEqual([]);
  }, 120_000);

  it('agent flush killed with SIGKILL mid-way loses nothing and sends nothing twice: its claim is taken back later', async () => {
    const d = fresh('killed');
    const spool = join(d, 'spool');
    const ids = Array.from({ length: 60 }, (_, i) => buildId(9100 + i));
    for (const id of ids) spoolBuild(spool, id, buildLine({ id, project: 'killed' }));
    const child = spawn(process.execPath, [...CLI, 'agent', 'flush'], {
      env: { ...process.env, BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key },
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    // Killed once it has delivered a few, while it works through the rest.
    await waitFor(async () => child.exitCode !== null || (await listed(ids)).length >= 5, 'agent flush to deliver 5 builds', 60_000, 10);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const delivered = await listed(ids);
    expect(delivered.length).toBeGreaterThanOrEqual(5);
    expect(delivered.length).toBeLessThan(ids.length);
    // What it had not yet deleted is still there: spooled, or claimed by the dead sender.
    const left = readdirSync(spool).filter((f) => f !== 'rejected');
    expect(left.filter((f) => f.includes('.sending.')).length).toBeLessThanOrEqual(1);
    expect(left.length).toBeGreaterThanOrEqual(ids.length - delivered.length);
    const target = { server: server.url, accessKey: key };
    // A fresh claim is left to its sender; everything else goes now.
    await flushSpool(spool, target);
    // Ten minutes later the dead sender's claim is taken back and sent (the server answers a build
    // it already has `unchanged`: stored once).
    const realNow = Date.now;
    Date.now = () => realNow() + 11 * 60_000;
    try {
      await flushSpool(spool, target);
    } finally {
      Date.now = realNow;
    }
    expect(readdirSync(spool).filter((f) => f !== 'rejected')).toEqual([]);
    expect((await listed(ids)).sort()).toEqual([...ids].sort());
  }, 120_000);

  it('a build whose server address is not a URL is spooled where the settings say, with the reason', async () => {
    const d = fresh('bad-server');
    mkdirSync(d);
    writeFileSync(join(d, 'agent.properties'), `server=scans.example.com\nspoolDir=${join(d, 'kept')}\n`);
    const settings = agentSettings({ HOME: d, BUILDSCOPE_AGENT_DIR: d });
    const id = buildId(9060);
    const outcome = await sendBuild(settings, JSON.parse(buildLine({ id })) as AgentBuild);
    expect(outcome).toEqual({ kind: 'spooled', reason: "the server address must be an http:// or https:// URL, got 'scans.example.com'" });
    expect(readdirSync(join(d, 'kept'))).toEqual([`${id}.ndjson`]);
  });

  it('writes a build whole or not at all, under its own name', () => {
    const spool = fresh('spool');
    const file = spoolBuild(spool, buildId(9030), '{"x":1}');
    expect(readFileSync(file, 'utf8')).toBe('{"x":1}\n');
    expect(readdirSync(spool)).toEqual([`${buildId(9030)}.ndjson`]);
    expect(() => spoolBuild(spool, '../../etc', '{}')).toThrow(/not an agent build ID/);
  });

  it('is private to the user whatever the umask: directories 0700 (an existing 0755 one tightened), builds 0600', () => {
    const previous = process.umask(0o022);
    try {
      const spool = join(fresh('private'), 'agent', 'spool');
      const file = spoolBuild(spool, buildId(9031), '{"x":1}');
      expect(statSync(spool).mode & 0o777).toBe(0o700);
      expect(statSync(join(spool, '..')).mode & 0o777).toBe(0o700); // the agent directory it made
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const old = fresh('old-spool');
      mkdirSync(old);
      chmodSync(old, 0o755);
      expect(statSync(spoolBuild(old, buildId(9032), '{}')).mode & 0o777).toBe(0o600);
      expect(statSync(old).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});

describe('the Gradle init script', () => {
  it('carries the agent version and the server it was made for, and never a secret', () => {
    const s = gradleInitScript({ server: 'https://scans.example.com/' });
    expect(s).toContain("VERSION = '0.1.0'");
    expect(s).toContain("DEFAULT_SERVER = 'https://scans.example.com'");
    expect(s).not.toContain('@AGENT_VERSION@');
    // The shared redaction patterns are written in, as Groovy literals.
    expect(s).not.toContain('@REDACTION_');
    expect(s).toContain("static final String REDACTION_MASK = '***'");
    expect(s).toContain("['\\\\b(gh[pousr]_)[A-Za-z0-9]{20,255}', '']");
    expect(gradleInitScript()).toContain("DEFAULT_SERVER = '@DEFAULT_SERVER@'");
    expect(() => gradleInitScript({ server: "http://x/'; System.exit(1); '" })).toThrow(/--server needs an http/);
  });
});

function cli(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('buildscope agent', () => {
  it('answers bad input with one line and status 2', async () => {
    const bad = await cli(['agent', 'gradle', '--server', 'ftp://x'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("buildscope agent gradle: --server needs an http:// or https:// URL, got 'ftp://x'\n");
    const d = fresh('cli');
    spoolBuild(join(d, 'spool'), buildId(9040), buildLine({ id: buildId(9040) }));
    const noServer = await cli(['agent', 'flush'], { BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: '' });
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toBe(`buildscope agent flush: no server configured: set BUILDSCOPE_SERVER or server= in ${join(d, 'agent.properties')}\n`);
    const badServer = await cli(['agent', 'flush'], { BUILDSCOPE_AGENT_DIR: d, BUILDSCOPE_SERVER: 'scans.example.com' });
    expect(badServer.code).toBe(2);
    expect(badServer.stderr).toBe("buildscope agent flush: the server address must be an http:// or https:// URL, got 'scans.example.com'\n");
    const noMaven = await cli(['agent', 'maven', '--maven-home', join(d, 'nowhere')], { BUILDSCOPE_AGENT_DIR: d });
    expect(noMaven.code).toBe(2);
    expect(noMaven.stderr).toBe(`buildscope agent maven: ${join(d, 'nowhere')} does not look like a Maven installation (no lib/maven-core*.jar)\n`);
  }, 120_000);

  it('installs the init script into the Gradle user home, and flush says when there is nothing to send', async () => {
    const home = fresh('gradle-home');
    const r = await cli(['agent', 'gradle', '--install', '--server', server.url], { GRADLE_USER_HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home, 'init.d', 'buildscope.gradle'), 'utf8')).toContain(`DEFAULT_SERVER = '${server.url}'`);
    const empty = await cli(['agent', 'flush'], { BUILDSCOPE_AGENT_DIR: fresh('none') });
    expect(empty.code).toBe(0);
    expect(empty.stderr).toMatch(/^No spooled builds in /);
    // Read-only: asking created nothing.
    expect(existsSync(join(dir, `none-${n - 1}`))).toBe(false);
  }, 120_000);
});
