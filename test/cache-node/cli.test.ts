// The `buildscope cache-node` commands as separate processes: validate, hash-secret, and a node
// that is killed with SIGKILL in the middle of an upload and started again.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HASHED_SECRET_PATTERN } from '../../src/cache-node/schema.js';
import { parseHashedSecret, verifySecret } from '../../src/cache-node/secret.js';
import { CLI } from '../support/compiled-cli.js';
import { waitFor } from '../support/wait.js';

const root = join(import.meta.dirname, '../..');
const fixtures = join(import.meta.dirname, 'fixtures');
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [...CLI, 'cache-node', ...args], { cwd: root, encoding: 'utf8', input, env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info' } });

describe('cache-node validate and hash-secret', () => {
  it('validate exits 0 for a valid file', () => {
    const r = cli(['validate', join(fixtures, 'valid', 'full.yaml')]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('valid');
  }, 90_000);

  it('validate exits 1 listing every fault with its path and place', () => {
    const r = cli(['validate', join(fixtures, 'invalid', 'several.yaml')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('3 faults');
    expect(r.stderr).toContain('cache.maxArtifactSize: must be >= 1 (MiB), found 0 (line 3, column 20)');
    expect(r.stderr).toContain('cache.targetSize.size: must be >= 1 (MiB), found 0 (line 6');
    expect(r.stderr).toContain('uiAccess.type: must be one of "disabled", "open", "secure", "generated", found "opne"');
    const missing = cli(['validate', join(fixtures, 'no-such-file.json')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('cannot read');
  }, 90_000);

  it('hash-secret reads the secret from standard input and prints a hash that verifies', async () => {
    const r = cli(['hash-secret'], 'correct horse\n');
    expect(r.status, r.stderr).toBe(0);
    const hash = r.stdout.trim();
    expect(hash).toMatch(new RegExp(HASHED_SECRET_PATTERN));
    const parsed = parseHashedSecret(hash);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(await verifySecret('correct horse', parsed.value)).toBe(true);
  }, 90_000);
});

interface Running {
  child: ChildProcess;
  url: Promise<string>;
  log: string[];
}

function serve(config: string, data: string): Running {
  const child = spawn(process.execPath, [...CLI, 'cache-node', '--config', config, '--port', '0', '--data', data], {
    cwd: root,
    env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log: string[] = [];
  const url = new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stderr!.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        log.push(line);
        if (line.includes('cache node listening')) resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.once('exit', (code) => reject(new Error(`node exited (${code}): ${log.join('\n')}`)));
  });
  return { child, url, log };
}

describe('a node process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-node-cli-'));
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const c of running) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('survives kill -9 in the middle of an upload, applies file changes live and logs generated UI credentials once', async () => {
    const config = join(dir, 'node.yaml');
    const data = join(dir, 'data');
    writeFileSync(config, 'version: 4\ncache:\n  accessControl:\n    anonymousLevel: readwrite\nuiAccess:\n  type: generated\n');
    const first = serve(config, data);
    running.push(first.child);
    const base = await first.url;
    const stored = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      const key = `f${i.toString(16).padStart(6, '0')}`;
      stored.set(key, `entry ${i} `.repeat(i * 50 + 1));
      expect((await fetch(`${base}/cache/${key}`, { method: 'PUT', body: stored.get(key)! })).status).toBe(201);
    }
    // Generated UI credentials: logged once, and they open the UI.
    const creds = first.log.map((l) => JSON.parse(l) as { msg: string; username?: string; password?: string }).filter((l) => l.msg.includes('node UI credentials generated'));
    expect(creds).toHaveLength(1);
    const ui = await fetch(`${base}/`, { headers: { authorization: `Basic ${Buffer.from(`${creds[0]!.username}:${creds[0]!.password}`).toString('base64')}` } });
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('<dd id="entries">20</dd>');

    // An upload in progress when the process is killed: until its first bytes are in the node's
    // temporary file (it started before the change below, which makes anonymous clients readers).
    const partial = request(`${base}/cache/partial`, { method: 'PUT', headers: { 'transfer-encoding': 'chunked' } });
    partial.on('error', () => undefined);
    partial.write(Buffer.alloc(64 * 1024, 1));
    const tmp = join(data, 'tmp');
    await waitFor(() => readdirSync(tmp).some((f) => f.endsWith('.part') && statSync(join(tmp, f), { throwIfNoEntry: false })?.size === 64 * 1024), 'a .part file of 64 KiB', 60_000);

    // A change of the file takes effect without a restart.
    writeFileSync(config, 'version: 4\ncache:\n  accessControl:\n    anonymousLevel: read\nuiAccess:\n  type: generated\n');
    await waitFor(async () => (await fetch(`${base}/cache/abc`, { method: 'PUT', body: 'x' })).status === 401, 'anonymous writes refused (401)', 30_000);

    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = serve(config, data);
    running.push(second.child);
    const base2 = await second.url;
    for (const [key, body] of stored) expect(await (await fetch(`${base2}/cache/${key}`)).text()).toBe(body);
    expect((await fetch(`${base2}/cache/partial`)).status).toBe(404);
    expect(readdirSync(join(data, 'tmp'))).toEqual([]);
    const status = second.log.find((l) => l.includes('cache index rebuilt from disk'));
    // The probe of the live change may have stored "abc" before the change applied.
    const probeStored = (await fetch(`${base2}/cache/abc`)).status === 200 ? 1 : 0;
    expect(JSON.parse(status!)).toMatchObject({ entries: stored.size + probeStored });
    second.child.kill('SIGTERM');
    expect(await new Promise((r) => second.child.once('exit', r))).toBe(0);
  }, 180_000);

  it('validates and serves a file whose hashed secrets come from hash-secret and from another tool (plain scrypt, second part a salt)', async () => {
    // Another tool: Python's hashlib.scrypt with the documented defaults and a 12-byte salt (or,
    // where python3 is not installed, node:crypto's scrypt called directly, not hashSecret).
    const py = spawnSync('python3', ['-c', `
import base64, hashlib, os
salt = os.urandom(12)
key = hashlib.scrypt(b'their-secret', salt=salt, n=2**15, r=8, p=1, dklen=32, maxmem=64*1024*1024)
print(base64.b64encode(key).decode() + ':' + base64.b64encode(salt).decode())
`], { encoding: 'utf8' });
    let foreign: string;
    if (py.error === undefined && py.status === 0) {
      foreign = py.stdout.trim();
    } else {
      expect((py.error as NodeJS.ErrnoException | undefined)?.code, py.stderr).toBe('ENOENT');
      const salt = randomBytes(12);
      foreign = `${scryptSync('their-secret', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString('base64')}:${salt.toString('base64')}`;
    }
    expect(foreign).toMatch(new RegExp(HASHED_SECRET_PATTERN));
    const ours = cli(['hash-secret'], 'our-secret\n').stdout.trim();
    const config = join(dir, 'two-kinds.yaml');
    // The foreign value wrapped over two lines (whitespace is tolerated).
    writeFileSync(
      config,
      `version: 4\ncache:\n  accessControl:\n    anonymousLevel: none\n    users:\n      ours: {level: readwrite, password: "${ours}"}\n` +
        `      theirs:\n        level: readwrite\n        password: >-\n          ${foreign.slice(0, 40)}\n          ${foreign.slice(40)}\nuiAccess: {type: disabled}\n`,
    );
    const v = cli(['validate', config]);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toContain('note: cache.accessControl.users.theirs.password: the part after the colon is read as a 12-byte salt, with scrypt N = 2^15, r = 8, p = 1');
    expect(v.stdout).not.toContain('users.ours');

    const node = serve(config, join(dir, 'two-kinds-data'));
    running.push(node.child);
    const base = await node.url;
    const auth = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
    expect((await fetch(`${base}/cache/by-ours`, { method: 'PUT', body: 'one', headers: auth('ours', 'our-secret') })).status).toBe(201);
    expect((await fetch(`${base}/cache/by-theirs`, { method: 'PUT', body: 'two', headers: auth('theirs', 'their-secret') })).status).toBe(201);
    expect(await (await fetch(`${base}/cache/by-ours`, { headers: auth('theirs', 'their-secret') })).text()).toBe('one');
    expect((await fetch(`${base}/cache/by-ours`, { headers: auth('theirs', 'our-secret') })).status).toBe(401);
    expect((await fetch(`${base}/cache/by-ours`, { headers: auth('ours', 'their-secret') })).status).toBe(401);
    node.child.kill('SIGTERM');
    await new Promise((r) => node.child.once('exit', r));
  }, 180_000);

  it('refuses to start on an invalid file, listing its faults', () => {
    const r = cli(['--config', join(fixtures, 'invalid', 'several.yaml'), '--port', '0', '--data', join(dir, 'x')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cache.targetSize.size: must be >= 1 (MiB), found 0');
  }, 90_000);
});
