// The HTTP build cache protocol over real HTTP on 127.0.0.1.

import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradleWithout413 } from '../../src/cache-node/server.js';
import { basic, fastHash, startTestNode, type TestNode } from './helpers.js';

const MiB = 1024 * 1024;

async function put(base: string, key: string, body: Buffer | string, headers: Record<string, string> = {}) {
  return fetch(`${base}/cache/${key}`, { method: 'PUT', body: typeof body === 'string' ? body : new Uint8Array(body), headers });
}

/** A PUT whose body is sent in chunks without Content-Length; resolves with the response status. */
function putChunked(base: string, key: string, chunk: Buffer, chunks: number, headers: Record<string, string> = {}): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/cache/${key}`, { method: 'PUT', headers: { 'transfer-encoding': 'chunked', ...headers } });
    let sent = 0;
    let done = false;
    req.on('response', (res) => {
      done = true;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sent }));
    });
    req.on('error', (e) => (done ? undefined : reject(e)));
    const pump = () => {
      while (!done && sent < chunks) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!done) req.end();
    };
    pump();
  });
}

/**
 * A PUT with Content-Length and no Expect (as Gradle before 7 sends it), the whole body written
 * whatever the node answers meanwhile. Resolves once the answer has been read and the body has
 * gone out or failed to; `sentAll`: it went out completely (no reset under the client).
 */
function putWhole(base: string, key: string, body: Buffer, agent?: Agent, headers: Record<string, string> = {}): Promise<{ status: number; sentAll: boolean; problem: unknown; socket: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/cache/${key}`, { method: 'PUT', agent, headers: { 'content-length': String(body.length), ...headers } });
    let sent: boolean | null = null;
    let answer: { status: number; problem: unknown } | null = null;
    const settle = () => {
      if (sent !== null && answer !== null) resolve({ ...answer, sentAll: sent, socket: req.socket });
    };
    req.on('error', (err) => {
      if (answer === null) reject(err);
      sent = false;
      settle();
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        answer = { status: res.statusCode ?? 0, problem: text.startsWith('{') ? JSON.parse(text) : null };
        settle();
      });
    });
    req.end(body, () => {
      sent ??= true;
      settle();
    });
  });
}

/** Sends only the headers of a PUT with a large Content-Length; resolves with the status. */
function putHeadersOnly(base: string, key: string, length: number, expectContinue: boolean, authorization?: string): Promise<{ status: number; continued: boolean }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-length': String(length) };
    if (authorization) headers['authorization'] = authorization;
    if (expectContinue) headers['expect'] = '100-continue';
    const req = request(`${base}/cache/${key}`, { method: 'PUT', headers });
    let continued = false;
    req.on('continue', () => {
      continued = true;
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, continued });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('GET, HEAD and PUT', () => {
  let t: TestNode;
  let base: string;
  beforeAll(async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, maxArtifactSize: 2 }, uiAccess: { type: 'open' } });
    base = t.node.url;
  });
  afterAll(() => t.close());

  it('answers 404 on a miss and 200 with the bytes on a hit', async () => {
    expect((await fetch(`${base}/cache/0123abcd`)).status).toBe(404);
    const body = randomBytes(10 * 1024);
    const p = await put(base, '0123abcd', body);
    expect(p.status).toBe(201);
    const g = await fetch(`${base}/cache/0123abcd`);
    expect(g.status).toBe(200);
    expect(g.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await g.arrayBuffer()).equals(body)).toBe(true);
    const h = await fetch(`${base}/cache/0123abcd`, { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect(h.headers.get('content-length')).toBe(String(body.length));
    expect((await fetch(`${base}/cache/ffff`, { method: 'HEAD' })).status).toBe(404);
    const s = t.node.status();
    expect(s.hits).toBeGreaterThanOrEqual(1);
    expect(s.misses).toBeGreaterThanOrEqual(1);
  });

  it('replaces an entry (204) and streams large entries intact', async () => {
    const big = randomBytes(Math.floor(1.5 * MiB));
    expect((await put(base, 'big-1', big)).status).toBe(201);
    expect((await put(base, 'big-1', big)).status).toBe(204);
    const g = await fetch(`${base}/cache/big-1`);
    expect(Buffer.from(await g.arrayBuffer()).equals(big)).toBe(true);
    const empty = await put(base, 'empty', '');
    expect(empty.status).toBe(201);
    const e = await fetch(`${base}/cache/empty`);
    expect(e.status).toBe(200);
    expect((await e.arrayBuffer()).byteLength).toBe(0);
  });

  it('answers 413 to a Content-Length over the limit only after reading the whole body, on a connection that stays usable', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await putWhole(base, 'too-big', Buffer.alloc(2 * MiB + 1, 7), agent);
      expect(r.status).toBe(413);
      expect(r.sentAll).toBe(true);
      expect(r.problem).toMatchObject({ status: 413 });
      // The same connection serves the next request (nothing was closed under the client).
      const next = await putWhole(base, 'at-limit', Buffer.alloc(2 * MiB), agent);
      expect(next.status).toBe(201);
      expect(next.socket).toBe(r.socket);
      expect((await fetch(`${base}/cache/too-big`)).status).toBe(404);
    } finally {
      agent.destroy();
    }
  });

  it('discards an oversized entry from Gradle before 7.0 with 202, logged and counted; Gradle 7 and later get the 413', async () => {
    const before = t.node.status();
    const old = await putWhole(base, 'gradle-6-big', Buffer.alloc(2 * MiB + 1, 1), undefined, { 'x-gradle-version': '6.9.4' });
    expect(old.status).toBe(202);
    expect((await fetch(`${base}/cache/gradle-6-big`)).status).toBe(404);
    const chunked = await putChunked(base, 'gradle-4-chunked', Buffer.alloc(256 * 1024, 1), 12, { 'x-gradle-version': '4.4.1' });
    expect(chunked).toEqual({ status: 202, sent: 12 });
    expect((await fetch(`${base}/cache/gradle-4-chunked`)).status).toBe(404);
    const current = await putWhole(base, 'gradle-7-big', Buffer.alloc(2 * MiB + 1, 1), undefined, { 'x-gradle-version': '7.0' });
    expect(current.status).toBe(413);
    // A small entry from an old Gradle is stored as usual.
    expect((await putWhole(base, 'gradle-6-small', Buffer.alloc(100, 1), undefined, { 'x-gradle-version': '6.9.4' })).status).toBe(201);
    const after = t.node.status();
    expect(after.discardedTooLarge - before.discardedTooLarge).toBe(2);
    expect(after.rejectedTooLarge - before.rejectedTooLarge).toBe(1);
    const logged = t.logs.lines.filter((l) => l.msg.startsWith('oversized entry discarded'));
    expect(logged.map((l) => [l.key, l.gradleVersion])).toEqual(expect.arrayContaining([['gradle-6-big', '6.9.4'], ['gradle-4-chunked', '4.4.1']]));
    expect(readdirSync(t.node.store.tmpDir)).toEqual([]);
  });

  it('reads the body of a PUT refused for its credentials too (401 and 403 reach a client that is still sending)', async () => {
    const n = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'read', users: { reader: { level: 'read', password: await fastHash('r') } } } } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const anonymous = await putWhole(n.node.url, 'refused', Buffer.alloc(3 * MiB, 1), agent, { 'x-gradle-version': '4.4.1' });
      expect(anonymous).toMatchObject({ status: 401, sentAll: true });
      const reader = await putWhole(n.node.url, 'refused', Buffer.alloc(3 * MiB, 1), agent, { authorization: basic('reader', 'r') });
      expect(reader).toMatchObject({ status: 403, sentAll: true });
      expect(reader.socket).toBe(anonymous.socket);
    } finally {
      agent.destroy();
      await n.close();
    }
  });

  it('lets an oversized upload from Gradle before 7.0 continue even when it expects 100-continue, then answers 202', async () => {
    const r = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      const body = Buffer.alloc(2 * MiB + 1, 3);
      const req = request(`${base}/cache/gradle-expect`, { method: 'PUT', headers: { 'content-length': String(body.length), expect: '100-continue', 'x-gradle-version': '6.1' } });
      let continued = false;
      req.on('continue', () => {
        continued = true;
        req.end(body);
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, continued }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(r).toEqual({ status: 202, continued: true });
    expect((await fetch(`${base}/cache/gradle-expect`)).status).toBe(404);
  });

  it('tells Gradle versions that cannot take a 413 from the others', () => {
    for (const v of ['4.4.1', '6.9.4', '5.0-rc-1', '0.9']) expect(gradleWithout413(v)).toBe(true);
    for (const v of ['7.0', '7.6.4', '8.10.2', '10.0', 'unknown', '']) expect(gradleWithout413(v)).toBe(false);
  });

  it('refuses with 413 before the body is sent when the client expects 100-continue', async () => {
    const r = await putHeadersOnly(base, 'too-big-2', 50 * MiB, true);
    expect(r).toEqual({ status: 413, continued: false });
  });

  it('refuses with 413, storing nothing, when a chunked body grows past the limit (after reading all of it)', async () => {
    const r = await putChunked(base, 'chunked-big', Buffer.alloc(256 * 1024, 1), 40);
    // The node read all 10 MiB (discarding what was over the limit) and then answered.
    expect(r).toEqual({ status: 413, sent: 40 });
    expect((await fetch(`${base}/cache/chunked-big`)).status).toBe(404);
    expect(readdirSync(t.node.store.tmpDir)).toEqual([]);
    const ok = await putChunked(base, 'chunked-ok', Buffer.alloc(256 * 1024, 2), 4);
    expect(ok.status).toBe(201);
    const g = await fetch(`${base}/cache/chunked-ok`);
    expect((await g.arrayBuffer()).byteLength).toBe(MiB);
  });

  it('keeps concurrent writers of one key safe: one whole entry wins', async () => {
    const bodies = Array.from({ length: 16 }, (_, i) => Buffer.alloc(50_000 + i * 1000, i));
    const results = await Promise.all(bodies.map((b) => put(base, 'contended', b)));
    for (const r of results) expect([201, 204]).toContain(r.status);
    const got = Buffer.from(await (await fetch(`${base}/cache/contended`)).arrayBuffer());
    const winner = bodies.find((b) => b.equals(got));
    expect(winner).toBeDefined();
    expect(t.node.store.lookup('contended')?.size).toBe(got.length);
    expect(readdirSync(t.node.store.tmpDir)).toEqual([]);
  });

  it('serves many keys written at once', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `k${i.toString(16).padStart(8, '0')}`);
    await Promise.all(keys.map((k) => put(base, k, k.repeat(100))));
    const texts = await Promise.all(keys.map(async (k) => (await fetch(`${base}/cache/${k}`)).text()));
    expect(texts).toEqual(keys.map((k) => k.repeat(100)));
  });

  it('a failing disk is a logged 500 for the upload, not a crash; reads go on', async () => {
    rmSync(t.node.store.tmpDir, { recursive: true });
    try {
      const r = await put(base, 'disk-fails', 'x');
      expect(r.status).toBe(500);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(t.logs.lines.some((l) => l.level === 50 && l.msg === 'storing an entry failed')).toBe(true);
      expect((await fetch(`${base}/cache/0123abcd`)).status).toBe(200);
    } finally {
      mkdirSync(t.node.store.tmpDir);
    }
    expect((await put(base, 'disk-fails', 'x')).status).toBe(201);
  });

  it('answers 400 for keys that are not keys and 405 for other methods', async () => {
    expect((await fetch(`${base}/cache/..%2Fetc`)).status).toBe(400);
    expect((await fetch(`${base}/cache/`)).status).toBe(400);
    expect((await fetch(`${base}/cache/%E0%A4%A`)).status).toBe(400);
    expect((await fetch(`${base}/cache/a/b`)).status).toBe(400);
    const d = await fetch(`${base}/cache/abc`, { method: 'DELETE' });
    expect(d.status).toBe(405);
    expect(d.headers.get('allow')).toBe('GET, HEAD, PUT');
    expect(d.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });
});

describe('access control', () => {
  let t: TestNode;
  let base: string;
  const config = async (anonymousLevel: string) => ({
    version: 4,
    cache: {
      accessControl: {
        anonymousLevel,
        users: {
          reader: { level: 'read', password: await fastHash('reader-pw') },
          writer: { level: 'readwrite', password: await fastHash('writer-pw'), note: 'CI' },
        },
      },
    },
  });
  beforeAll(async () => {
    t = await startTestNode(await config('none'));
    base = t.node.url;
  });
  afterAll(() => t.close());

  it('anonymous none: 401 with a Basic challenge for reads and writes', async () => {
    const g = await fetch(`${base}/cache/abc`);
    expect(g.status).toBe(401);
    expect(g.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
    expect((await put(base, 'abc', 'x')).status).toBe(401);
  });

  it('refuses an upload that expects 100-continue before its body when credentials are missing or too weak', async () => {
    const none = await putHeadersOnly(base, 'cont', 10, true);
    expect(none).toEqual({ status: 401, continued: false });
    const weak = await putHeadersOnly(base, 'cont', 10, true, basic('reader', 'reader-pw'));
    expect(weak).toEqual({ status: 403, continued: false });
  });

  it('a reader may read but not write (403); a writer may do both', async () => {
    expect((await fetch(`${base}/cache/abc`, { headers: { authorization: basic('reader', 'reader-pw') } })).status).toBe(404);
    const w = await put(base, 'abc', 'x', { authorization: basic('reader', 'reader-pw') });
    expect(w.status).toBe(403);
    expect(((await w.json()) as { detail: string }).detail).toContain("'reader' has level 'read'");
    expect((await put(base, 'abc', 'x', { authorization: basic('writer', 'writer-pw') })).status).toBe(201);
    expect(await (await fetch(`${base}/cache/abc`, { headers: { authorization: basic('reader', 'reader-pw') } })).text()).toBe('x');
  });

  it('wrong passwords, unknown users and malformed headers get 401', async () => {
    for (const auth of [basic('writer', 'nope'), basic('mallory', 'writer-pw'), 'Basic !!!', 'Bearer abc', basic('writer', '')]) {
      const r = await fetch(`${base}/cache/abc`, { headers: { authorization: auth } });
      expect(r.status, auth).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain('Basic');
    }
  });

  it('anonymous read: reads without credentials, writes need them (401)', async () => {
    t.writeConfig(await config('read'));
    expect(await t.node.reload()).toBe(true);
    expect((await fetch(`${base}/cache/abc`)).status).toBe(200);
    const w = await put(base, 'abc', 'y');
    expect(w.status).toBe(401);
    expect(w.headers.get('www-authenticate')).toContain('Basic');
  });

  it('anonymous readwrite: everything without credentials; a read-only user is still limited', async () => {
    t.writeConfig(await config('readwrite'));
    expect(await t.node.reload()).toBe(true);
    expect((await put(base, 'abc', 'z')).status).toBe(204);
    expect((await put(base, 'abc', 'z', { authorization: basic('reader', 'reader-pw') })).status).toBe(403);
  });

  it('an invalid file on reload leaves the running configuration in force, with the faults logged', async () => {
    t.writeConfig({ version: 4, cache: { accessControl: { anonymousLevel: 'everyone' } } });
    expect(await t.node.reload()).toBe(false);
    expect((await put(base, 'abc', 'w')).status).toBe(204);
    expect(t.logs.lines.some((l) => l.level === 50 && l.msg.includes('cache.accessControl.anonymousLevel: must be one of'))).toBe(true);
  });
});

describe('eviction, expiry and restart', () => {
  it('evicts least recently used entries down to a fixed target size', async () => {
    const t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, targetSize: { type: 'fixed', size: 1 } } });
    try {
      const base = t.node.url;
      const chunk = Buffer.alloc(300 * 1024, 7);
      await put(base, 'e0', chunk);
      await put(base, 'e1', chunk);
      await put(base, 'e2', chunk);
      // e0 is used again, so e1 is now the least recently used.
      expect((await fetch(`${base}/cache/e0`)).status).toBe(200);
      await put(base, 'e3', chunk);
      await t.node.store.scheduleEviction();
      expect(t.node.store.bytes).toBeLessThanOrEqual(MiB);
      expect((await fetch(`${base}/cache/e1`)).status).toBe(404);
      for (const k of ['e0', 'e2', 'e3']) expect((await fetch(`${base}/cache/${k}`)).status, k).toBe(200);
      expect(t.node.status().evicted).toBe(1);
      // LRU order survives a restart (last access is written back to the files).
      await fetch(`${base}/cache/e2`);
      await t.restart();
      await put(t.node.url, 'e4', chunk);
      await t.node.store.scheduleEviction();
      expect((await fetch(`${t.node.url}/cache/e0`)).status).toBe(404);
      expect((await fetch(`${t.node.url}/cache/e2`)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('maxAvailable keeps the free space buffer: a buffer as large as the volume leaves no room', async () => {
    const t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, targetSize: { type: 'maxAvailable' }, freeSpaceBufferSize: 1 } });
    try {
      await put(t.node.url, 'm1', 'kept');
      await t.node.store.scheduleEviction();
      expect((await fetch(`${t.node.url}/cache/m1`)).status).toBe(200);
      t.writeConfig({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, targetSize: { type: 'maxAvailable' }, freeSpaceBufferSize: 1024 * 1024 * 1024 } });
      await t.node.reload();
      await t.node.store.scheduleEviction();
      expect((await fetch(`${t.node.url}/cache/m1`)).status).toBe(404);
      expect(t.node.status().targetBytes).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('expires entries older than maxEntryAgeInHours', async () => {
    let now = Date.UTC(2026, 0, 1);
    const t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, maxEntryAgeInHours: 1 } }, { clock: () => now });
    try {
      const base = t.node.url;
      await put(base, 'old', 'a');
      now += 30 * 60_000;
      await put(base, 'young', 'b');
      expect((await fetch(`${base}/cache/old`)).status).toBe(200);
      now += 45 * 60_000; // old: 75 min, young: 45 min
      expect((await fetch(`${base}/cache/old`)).status).toBe(404);
      expect((await fetch(`${base}/cache/young`)).status).toBe(200);
      now += 60 * 60_000;
      await t.node.store.enforceLimits();
      expect(t.node.store.size).toBe(0);
      expect(t.node.status().expired).toBe(2);
    } finally {
      await t.close();
    }
  });

  it('serves what it stored after a restart', async () => {
    const t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' } } });
    try {
      const bodies = new Map(Array.from({ length: 10 }, (_, i) => [`r${i}`, randomBytes(1000 + i * 5000)] as const));
      for (const [k, b] of bodies) await put(t.node.url, k, b);
      const bytes = t.node.store.bytes;
      await t.restart();
      expect(t.node.store.size).toBe(10);
      expect(t.node.store.bytes).toBe(bytes);
      for (const [k, b] of bodies) expect(Buffer.from(await (await fetch(`${t.node.url}/cache/${k}`)).arrayBuffer()).equals(b)).toBe(true);
    } finally {
      await t.close();
    }
  });
});
