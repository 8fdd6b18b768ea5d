// Password guessing is limited per user name and client address, before any hashing, with
// exponential backoff and Retry-After; the real user still signs in from a client that has not
// failed, and her check does not queue behind a flood of wrong passwords. Over real HTTP: the
// sign-in of the web pages and Basic credentials on the API answer 429 problem documents.

import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { HashGate } from '../../src/auth/hash-gate.js';
import type { AuthResult } from '../../src/auth/index.js';
import { clientKey, DEFAULT_SIGN_IN_LIMITS, SignInLimiter, type Admission, type SignInLimits } from '../../src/auth/sign-in-limits.js';
import { ConfigError, parseConfig } from '../../src/config.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { basic, newLocation, startTestServer, useCarolAuth, type TestServer } from './support.js';

const T0 = 1_750_000_000_000;

function go(a: Admission): Extract<Admission, { kind: 'go' }> {
  if (a.kind !== 'go') throw new Error(`expected go, got ${JSON.stringify(a)}`);
  return a;
}

/** One failed check of `user` from `client`. */
function fail(limiter: SignInLimiter, user: string, client: string): void {
  go(limiter.admit(user, client)).done('failed');
}

describe('SignInLimiter', () => {
  it('gives a user name five free failures per client, then doubles the wait after each failure; the right password clears them', () => {
    let now = T0;
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => now);
    for (let i = 0; i < 5; i++) fail(limiter, 'alice', '10.0.0.1');
    expect(limiter.admit('alice', '10.0.0.1')).toEqual({ kind: 'wait', scope: 'userAndClient', retryAfterSeconds: 1 });
    now += 999;
    expect(limiter.admit('alice', '10.0.0.1').kind).toBe('wait');
    now += 1;
    fail(limiter, 'alice', '10.0.0.1'); // the sixth failure: the next try waits 2 s
    expect(limiter.admit('alice', '10.0.0.1')).toEqual({ kind: 'wait', scope: 'userAndClient', retryAfterSeconds: 2 });
    now += 2000;
    fail(limiter, 'alice', '10.0.0.1');
    expect(limiter.admit('alice', '10.0.0.1')).toMatchObject({ kind: 'wait', retryAfterSeconds: 4 });
    // Other names from this client, and this name from other clients, are not held.
    go(limiter.admit('bob', '10.0.0.1')).done('unchecked');
    go(limiter.admit('alice', '10.0.0.2')).done('unchecked');
    now += 4000;
    go(limiter.admit('alice', '10.0.0.1')).done('succeeded');
    for (let i = 0; i < 4; i++) fail(limiter, 'alice', '10.0.0.1');
    expect(limiter.admit('alice', '10.0.0.1').kind).toBe('go');
  });

  it('never waits longer than maxBackoffSeconds, and forgets failures forgetAfterSeconds after the last one', () => {
    let now = T0;
    const limits: SignInLimits = { ...DEFAULT_SIGN_IN_LIMITS, maxBackoffSeconds: 10, forgetAfterSeconds: 60 };
    const limiter = new SignInLimiter(limits, () => now);
    for (let i = 0; i < 40; i++) {
      const a = limiter.admit('alice', '10.0.0.1');
      if (a.kind === 'go') {
        a.done('failed');
        continue;
      }
      expect(a.retryAfterSeconds).toBeLessThanOrEqual(10);
      now += a.retryAfterSeconds * 1000;
      fail(limiter, 'alice', '10.0.0.1');
    }
    expect(limiter.admit('alice', '10.0.0.1')).toMatchObject({ kind: 'wait', retryAfterSeconds: 10 });
    now += 60_000;
    for (let i = 0; i < 5; i++) fail(limiter, 'alice', '10.0.0.1');
    expect(limiter.admit('alice', '10.0.0.1')).toMatchObject({ kind: 'wait', retryAfterSeconds: 1 });
  });

  it('limits one client trying many user names', () => {
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => T0);
    for (let i = 0; i < 20; i++) fail(limiter, `user-${i}`, '10.0.0.9');
    expect(limiter.admit('someone-else', '10.0.0.9')).toEqual({ kind: 'wait', scope: 'client', retryAfterSeconds: 1 });
    go(limiter.admit('someone-else', '10.0.0.10')).done('unchecked');
  });

  it('a user name failing from many clients only slows the clients that failed on it, never one that has not', () => {
    let now = T0;
    const limiter = new SignInLimiter({ ...DEFAULT_SIGN_IN_LIMITS, user: 10 }, () => now);
    for (let i = 0; i < 10; i++) fail(limiter, 'alice', `10.1.0.${i}`);
    // A guessing client that failed once now waits after that one failure...
    expect(limiter.admit('alice', '10.1.0.3')).toMatchObject({ kind: 'wait', scope: 'userAndClient', retryAfterSeconds: 1 });
    // ...while a client that has not failed on the name gets its try, at once and first in line.
    const own = go(limiter.admit('alice', '192.168.1.20'));
    expect(own.priority).toBe('first');
    own.done('succeeded');
    go(limiter.admit('alice', '192.168.1.20')).done('succeeded');
    now += 1000;
    go(limiter.admit('alice', '10.1.0.3')).done('unchecked');
  });

  it('counts checks still running, so simultaneous tries get no more than sequential ones', () => {
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => T0);
    const running = Array.from({ length: 5 }, () => go(limiter.admit('alice', '10.0.0.1')));
    expect(limiter.admit('alice', '10.0.0.1')).toEqual({ kind: 'wait', scope: 'userAndClient', retryAfterSeconds: 1 });
    running[0]!.done('unchecked');
    running[0]!.done('failed'); // a second done() counts nothing
    expect(limiter.admit('alice', '10.0.0.1').kind).toBe('go');
  });

  it("queues the checks of a client with a failure or a check running as 'later'", () => {
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => T0);
    const first = go(limiter.admit('alice', '10.0.0.1'));
    expect(first.priority).toBe('first');
    expect(go(limiter.admit('bob', '10.0.0.1')).priority).toBe('later');
    first.done('failed');
    expect(go(limiter.admit('carol', '10.0.0.2')).priority).toBe('first');
  });

  it('keeps a bounded number of records, and none for clients whose checks all succeeded', () => {
    const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => T0, 50);
    for (let i = 0; i < 500; i++) fail(limiter, `user-${i}`, `10.2.${i >> 8}.${i & 255}`);
    expect(limiter.size).toEqual({ pairs: 50, clients: 50, users: 50 });
    const fresh = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, () => T0);
    for (let i = 0; i < 10; i++) go(fresh.admit(`user-${i}`, `10.3.0.${i}`)).done('succeeded');
    expect(fresh.size).toEqual({ pairs: 0, clients: 0, users: 0 });
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey(undefined)).toBe('-');
  });

  it('is configured by auth.signInLimits, whose waits are never forgotten before they end', () => {
    expect(parseConfig({}).auth.signInLimits).toEqual(DEFAULT_SIGN_IN_LIMITS);
    expect(parseConfig({ auth: { signInLimits: { userAndClient: 3 } } }).auth.signInLimits).toEqual({ ...DEFAULT_SIGN_IN_LIMITS, userAndClient: 3 });
    expect(() => parseConfig({ auth: { signInLimits: { maxBackoffSeconds: 600, forgetAfterSeconds: 60 } } })).toThrow(ConfigError);
    expect(() => parseConfig({ auth: { signInLimits: { userAndClient: 0 } } })).toThrow(ConfigError);
  });
});

describe('password checks of the authenticator under the limits', () => {
  const carol = useCarolAuth('bs-sign-in-limits-');

  const limitedResult = (r: AuthResult) => r.kind === 'rejected' && r.retryAfterSeconds !== undefined;

  it('300 simultaneous wrong passwords from one address: five are hashed, the rest refused without hashing; the right password works from another address', async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 1000 });
    const authenticator = createAuthenticator(carol.auth.users, carol.auth.tokens, Date.now, { ttlMs: 0 }, gate, new SignInLimiter());
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => authenticator.authenticate(basic('carol', `wrong-${i}`), '10.0.0.66')));
    expect(gate.hashes).toBe(5);
    expect(results.filter(limitedResult)).toHaveLength(295);
    expect(results.filter((r) => r.kind === 'rejected' && r.reason === 'wrong user name or password')).toHaveLength(5);
    // The right password from the guessing address is not even checked...
    const same = await authenticator.authenticate(basic('carol', 'carol-secret'), '10.0.0.66');
    expect(same).toMatchObject({ kind: 'rejected', retryAfterSeconds: 1 });
    expect(gate.hashes).toBe(5);
    // ...from the user's own address it is, and it lets her in.
    expect(await authenticator.authenticate(basic('carol', 'carol-secret'), '10.0.0.7')).toMatchObject({ kind: 'authenticated', principal: { user: 'carol' } });
  });

  it('a first login from a client without failures is checked before the queued checks of clients that failed, even when they guess her own name', async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 1000 });
    const authenticator = createAuthenticator(carol.auth.users, carol.auth.tokens, Date.now, { ttlMs: 0 }, gate, new SignInLimiter());
    const guessers = Array.from({ length: 12 }, (_, i) => `10.0.1.${i}`);
    // Each guessing client fails once on carol's name; then they all guess at once.
    for (const g of guessers) expect(await authenticator.authenticate(basic('carol', 'guess'), g)).toMatchObject({ kind: 'rejected' });
    const finished: string[] = [];
    const flood = guessers.map((g, i) => authenticator.authenticate(basic('carol', `guess-${i}`), g).then(() => void finished.push(`wrong-${i}`)));
    const login = authenticator.authenticate(basic('carol', 'carol-secret'), '10.0.0.8').then((r) => {
      finished.push('login');
      return r;
    });
    expect(await login).toMatchObject({ kind: 'authenticated', principal: { user: 'carol' } });
    await Promise.all(flood);
    // The first guess already holds the only slot; the login comes right after it.
    expect(finished.indexOf('login')).toBeLessThanOrEqual(1);
  });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A request from a given loopback address (the whole of 127/8 reaches the server on Linux), so that tests can be several clients. */
function send(url: string, from: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, localAddress: from, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('sign-in limits over HTTP', () => {
  let s: TestServer;
  let now = Date.now();
  beforeAll(async () => {
    s = await startTestServer(await newLocation('sqlite'), {
      plugins: [sessionPlugin],
      clock: () => now,
      raw: { auth: { signInLimits: { userAndClient: 3 } } },
    });
    await s.user('dana', ['accessBuildDataViaApi'], { password: 'dana-secret' });
    await s.user('eve', ['accessBuildDataViaApi'], { password: 'eve-secret' });
  });
  afterAll(() => s?.close());

  const signIn = (from: string, user: string, password: string) =>
    send(`${s.url}/api/session`, from, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ user, password }));

  function expectTooMany(a: Answer): number {
    expect(a.status).toBe(429);
    expect(a.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = JSON.parse(a.body) as { type: string; status: number; detail: string };
    expect(problem).toMatchObject({ type: 'urn:buildscope:problem:too-many-requests', status: 429 });
    expect(problem.detail).toMatch(/too many failed sign-ins/);
    const retryAfter = Number(a.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
    return retryAfter;
  }

  it('POST /api/session: 401 for the free failures, then 429 with Retry-After; the right password works from another address at once, and from the same one after the wait', async () => {
    for (let i = 0; i < 3; i++) expect((await signIn('127.0.0.2', 'dana', `wrong-${i}`)).status).toBe(401);
    expectTooMany(await signIn('127.0.0.2', 'dana', 'wrong-3'));
    const retryAfter = expectTooMany(await signIn('127.0.0.2', 'dana', 'dana-secret'));
    expect((await signIn('127.0.0.3', 'dana', 'dana-secret')).status).toBe(200);
    now += retryAfter * 1000;
    expect((await signIn('127.0.0.2', 'dana', 'dana-secret')).status).toBe(200);
  });

  it('Basic credentials on the API: the same limits, answered 429 with Retry-After', async () => {
    const builds = (from: string, password: string) => send(`${s.url}/api/builds?reverse=true&maxBuilds=1`, from, 'GET', { authorization: basic('eve', password) });
    for (let i = 0; i < 3; i++) expect((await builds('127.0.0.4', `wrong-${i}`)).status).toBe(401);
    expectTooMany(await builds('127.0.0.4', 'wrong-3'));
    expectTooMany(await builds('127.0.0.4', 'eve-secret'));
    expect((await builds('127.0.0.5', 'eve-secret')).status).toBe(200);
  });
});
