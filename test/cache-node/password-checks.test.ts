// What wrong passwords may cost the node: bounded key derivations (file reads keep their threads),
// 429 with Retry-After after repeated failures from one client, and the same derivation for
// unknown user names as for known ones. Real HTTP on loopback; clients from several loopback
// addresses (127.0.0.x) stand for several machines.

import { request, Agent } from 'node:http';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FailureLimiter, HashGate } from '../../src/auth/hash-gate.js';
import { costliest, PasswordChecker } from '../../src/cache-node/access.js';
import { hashSecret, parseHashedSecret } from '../../src/cache-node/secret.js';
import { basic, fastHash, startTestNode, type TestNode } from './helpers.js';
import { waitFor } from '../support/wait.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer; agent?: Agent; localAddress?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent, localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

let t: TestNode | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe('password checks do not starve file reads', () => {
  it('anonymous reads of a 4 MiB entry stay within a generous bound of their baseline while 64 clients send wrong passwords', async () => {
    // The real (slow) parameters: this is what fills the thread pool.
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'read', users: { ci: { level: 'readwrite', password: await hashSecret('ci-secret') } } } } });
    const base = t.node.url;
    const entry = randomBytes(4 * 1024 * 1024);
    expect((await send(`${base}/cache/big-entry`, { method: 'PUT', body: entry, headers: { authorization: basic('ci', 'ci-secret') } })).status).toBe(201);

    const reader = new Agent({ keepAlive: true, maxSockets: 1 });
    const timedRead = async () => {
      const start = performance.now();
      const r = await send(`${base}/cache/big-entry`, { agent: reader });
      expect(r.status).toBe(200);
      expect(r.body.length).toBe(entry.length);
      return performance.now() - start;
    };
    await timedRead(); // warm: the connection and the page cache
    const baseline: number[] = [];
    for (let i = 0; i < 8; i++) baseline.push(await timedRead());

    // 64 clients, each from its own loopback address, each with one wrong password in flight at
    // any time (a new one each time: a repeated header would be answered from memory).
    let hammering = true;
    const statuses = new Map<number, number>();
    const agents = Array.from({ length: 64 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const clients = agents.map(async (agent, i) => {
      while (hammering) {
        const r = await send(`${base}/cache/big-entry`, { agent, localAddress: `127.0.0.${i + 2}`, headers: { authorization: basic(i % 2 ? 'ci' : `nobody${i}`, randomBytes(8).toString('hex')) } }).catch(() => null);
        if (r) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r?.status === 429) await new Promise((res) => setTimeout(res, 20));
      }
    });
    const before = t.node.passwordChecks().hashes;
    // Let the queue fill before measuring.
    await waitFor(() => t!.node.passwordChecks().hashes - before >= 4, 'four password checks hashed', 60_000, 10);
    const loaded: number[] = [];
    for (let i = 0; i < 8; i++) loaded.push(await timedRead());
    const during = t.node.passwordChecks();
    hammering = false;
    // The clients go away: their queued checks are skipped, not derived for nobody.
    for (const a of agents) a.destroy();
    await Promise.all(clients);
    reader.destroy();
    await waitFor(() => t!.node.passwordChecks().waiting === 0, 'no password check waiting', 60_000);
    const after = t.node.passwordChecks();

    const b = median(baseline);
    const l = median(loaded);
    // Measured here (2 busy cores): medians of 16-42 ms at baseline, 91-150 ms under the hammer.
    // With derivations unbounded (concurrency 64) the eight reads did not end within 3 minutes.
    expect(l, `baseline ${b.toFixed(1)} ms, under load ${l.toFixed(1)} ms`).toBeLessThan(b * 15 + 750);
    // The hammer did keep derivations running throughout, and never more than the bound.
    expect(during.hashes - before).toBeGreaterThanOrEqual(2);
    expect(during.waiting).toBeGreaterThanOrEqual(32);
    expect(during.peakConcurrent).toBe(during.concurrency);
    // Of the checks that were queued when the clients left, at most those in a slot then ran.
    expect(after.hashes - during.hashes).toBeLessThanOrEqual(during.concurrency * 2);
    expect(during.concurrency).toBeLessThanOrEqual(2);
    expect([...statuses.keys()].every((s) => s === 401 || s === 429)).toBe(true);
  }, 180_000);
});

describe('failed checks per client', () => {
  it('answers 429 with Retry-After after 10 failures from one client, without a derivation; other clients are not affected; the limit ends with its window', async () => {
    let offset = 0;
    t = await startTestNode(
      { version: 4, cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } } },
      { clock: () => Date.now() + offset },
    );
    const base = t.node.url;
    for (let i = 0; i < 10; i++) {
      const r = await send(`${base}/cache/k1`, { headers: { authorization: basic(i % 2 ? 'ci' : 'ghost', `wrong-${i}`) } });
      expect(r.status).toBe(401);
    }
    const hashes = t.node.passwordChecks().hashes;
    const limited = await send(`${base}/cache/k1`, { headers: { authorization: basic('ci', 'wrong-again') } });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(limited.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(limited.body.toString())).toMatchObject({ status: 429 });
    // The right password from the same client waits too (it has not passed before).
    expect((await send(`${base}/cache/k1`, { headers: { authorization: basic('ci', 'ci-secret') } })).status).toBe(429);
    expect(t.node.passwordChecks().hashes).toBe(hashes);
    expect(t.node.passwordChecks().refusedTooManyFailures).toBe(2);

    // Another client: checked as usual.
    expect((await send(`${base}/cache/k1`, { localAddress: '127.0.0.7', headers: { authorization: basic('ci', 'nope') } })).status).toBe(401);
    expect((await send(`${base}/cache/k1`, { localAddress: '127.0.0.7', headers: { authorization: basic('ci', 'ci-secret') } })).status).toBe(404);

    // After the window, the first client is checked again.
    offset += 61_000;
    expect((await send(`${base}/cache/k1`, { headers: { authorization: basic('ci', 'ci-secret') } })).status).toBe(404);
    expect((await send(`${base}/cache/k1`, { headers: { authorization: basic('ci', 'wrong-later') } })).status).toBe(401);
  }, 60_000);

  it('64 concurrent wrong passwords from one client cost at most 10 derivations; the rest are 429', async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } } });
    const before = t.node.passwordChecks().hashes;
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, i) => send(`${t!.node.url}/cache/k2`, { headers: { authorization: basic('ci', `guess-${i}`) } })),
    );
    const count = (s: number) => answers.filter((a) => a.status === s).length;
    expect(count(401)).toBeLessThanOrEqual(10);
    expect(count(401) + count(429)).toBe(64);
    expect(t.node.passwordChecks().hashes - before).toBe(count(401));
  }, 60_000);

  it('concurrent first requests with the same right credentials share one derivation (a build with many connections is not limited)', async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } } });
    const answers = await Promise.all(Array.from({ length: 32 }, () => send(`${t!.node.url}/cache/k3`, { headers: { authorization: basic('ci', 'ci-secret') } })));
    expect(answers.map((a) => a.status)).toEqual(Array(32).fill(404));
    expect(t.node.passwordChecks().hashes).toBe(1);
  }, 60_000);
});

describe('unknown user names', () => {
  it('cost the same derivation as known ones, on the cache and on the secure UI, and get the same answer', async () => {
    t = await startTestNode({
      version: 4,
      cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } },
      uiAccess: { type: 'secure', username: 'admin', password: await fastHash('ui-secret') },
    });
    const base = t.node.url;
    const hashes = () => t!.node.passwordChecks().hashes;
    const attempt = async (path: string, user: string, password: string) => {
      const before = hashes();
      const r = await send(`${base}${path}`, { headers: { authorization: basic(user, password) } });
      return { status: r.status, detail: (JSON.parse(r.body.toString()) as { detail?: string }).detail, hashes: hashes() - before };
    };
    const known = await attempt('/cache/k4', 'ci', 'wrong');
    const unknown = await attempt('/cache/k4', 'no-such-user', 'wrong');
    expect(known).toEqual({ status: 401, detail: 'Unknown user or wrong password', hashes: 1 });
    expect(unknown).toEqual(known);
    // Repeated: answered from memory for both, without a derivation.
    expect((await attempt('/cache/k4', 'ci', 'wrong')).hashes).toBe(0);
    expect((await attempt('/cache/k4', 'no-such-user', 'wrong')).hashes).toBe(0);
    // The right password: one derivation, then remembered.
    expect(await attempt('/cache/k4', 'ci', 'ci-secret')).toMatchObject({ status: 404, hashes: 1 });
    expect(await attempt('/cache/k4', 'ci', 'ci-secret')).toMatchObject({ status: 404, hashes: 0 });

    const uiKnown = await attempt('/status.json', 'admin', 'wrong');
    const uiUnknown = await attempt('/status.json', 'root', 'wrong');
    expect(uiKnown).toMatchObject({ status: 401, hashes: 1 });
    expect(uiUnknown).toEqual(uiKnown);
  }, 60_000);

  it('the decoy for unknown names has the cost of the most expensive configured hash', async () => {
    const cheap = parseHashedSecret(await fastHash('a'));
    const dear = parseHashedSecret(await hashSecret('b', { logN: 6, r: 2, p: 1 }));
    if (!cheap.ok || !dear.ok) throw new Error('unparsable');
    expect(costliest([cheap.value, dear.value])).toEqual({ logN: 6, r: 2, p: 1 });
    expect(costliest([])).toEqual({ logN: 15, r: 8, p: 1 });
  });
});

describe('HashGate and FailureLimiter', () => {
  it('never runs more than its concurrency, runs every admitted task, and refuses exactly what exceeds the queue (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 8 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 24 }), async (concurrency, maxQueued, delays) => {
        const gate = new HashGate({ concurrency, maxQueued });
        let running = 0;
        let peak = 0;
        const results = await Promise.all(
          delays.map((d, i) =>
            gate.run(async () => {
              running++;
              peak = Math.max(peak, running);
              await new Promise((r) => setTimeout(r, d));
              running--;
              return i;
            }),
          ),
        );
        expect(peak).toBeLessThanOrEqual(concurrency);
        const refused = Math.max(0, delays.length - concurrency - maxQueued);
        // Submitted at once: the first concurrency + maxQueued run, each with its own result.
        expect(results.map((r) => (r.kind === 'ran' ? r.value : r.kind))).toEqual(delays.map((_, i) => (i < delays.length - refused ? i : 'busy')));
        expect(gate.hashes).toBe(delays.length - refused);
        expect(gate.refusedBusy).toBe(refused);
        expect(gate.waiting).toBe(0);
        // Everything released: a new task runs at once.
        expect(await gate.run(async () => 'again')).toEqual({ kind: 'ran', value: 'again' });
      }),
      { numRuns: 60 },
    );
  });

  it('skips a queued derivation whose client went away', async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 4 });
    let release!: () => void;
    const first = gate.run(() => new Promise<string>((r) => (release = () => r('first'))));
    let wanted = true;
    const second = gate.run(async () => 'second', () => wanted);
    wanted = false;
    release();
    expect(await first).toEqual({ kind: 'ran', value: 'first' });
    expect(await second).toEqual({ kind: 'abandoned' });
    expect(gate.hashes).toBe(1);
    expect(await gate.run(async () => 'third')).toEqual({ kind: 'ran', value: 'third' });
  });

  it('a check sharing the derivation of a client that went away runs its own', async () => {
    const gate = new HashGate({ concurrency: 1 });
    let release!: (v: boolean) => void;
    const blocker = gate.run(() => new Promise<boolean>((r) => (release = r)));
    const checker = new PasswordChecker(gate, new FailureLimiter());
    const hashed = parseHashedSecret(await fastHash('pw'));
    if (!hashed.ok) throw new Error(hashed.reason);
    const header = basic('ci', 'pw');
    let firstWanted = true;
    const first = checker.check(header, { username: 'ci', password: 'pw' }, hashed.value, '10.0.0.1', () => firstWanted);
    const second = checker.check(header, { username: 'ci', password: 'pw' }, hashed.value, '10.0.0.2');
    firstWanted = false;
    release(true);
    await blocker;
    expect(await first).toEqual({ kind: 'abandoned' });
    expect(await second).toEqual({ kind: 'ok' });
    expect(gate.hashes).toBe(2); // the blocker and the second check's own
    expect(checker.remembered(header)).toBe('ci');
  });

  it('counts failures per client within a sliding window, and checks still running against the limit', () => {
    let now = 0;
    const limiter = new FailureLimiter({ limit: 3, windowMs: 10_000, clock: () => now });
    const go = (client: string) => {
      const a = limiter.admit(client);
      if (a.kind !== 'go') throw new Error(`refused, retry after ${a.retryAfterSeconds}`);
      return a;
    };
    go('a').done(true);
    now = 4_000;
    go('a').done(false); // a success does not count
    go('a').done(true);
    const running = go('a'); // two failures and one running: at the limit
    expect(limiter.admit('a')).toEqual({ kind: 'wait', retryAfterSeconds: 6 });
    expect(limiter.admit('b').kind).toBe('go');
    running.done(false);
    now = 10_000; // the first failure has left the window
    go('a').done(true);
    go('a').done(true);
    expect(limiter.admit('a')).toEqual({ kind: 'wait', retryAfterSeconds: 4 });
    expect(limiter.refused).toBe(2);
  });
});
