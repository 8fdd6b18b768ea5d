// The authenticator's cache of successful authentications: it never serves a principal at or past
// its credential's expiry, keeps credentials apart, never lets a wrong password in, and reuses a
// success for at most the TTL (after which a revoked key or changed password stops working).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AuthCache, openAuth, type Auth, type AuthResult, type Principal } from '../../src/auth/index.js';
import { hashPassword } from '../../src/auth/password.js';
import { parseConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { pgAvailable } from '../support/postgres.js';
import { basic, bearer, newLocation, startTestServer, type Dialect, type Location, type TestServer } from './support.js';

const T0 = 1_750_000_000_000; // a whole second, so JWT expiry (in seconds) is exact
const TTL = 5000;

function principal(user: string, expiresAt: number | null): Principal {
  return { user, credential: 'accessKey', permissions: new Set(['accessBuildDataViaApi']), projects: null, expiresAt };
}

function userOf(r: AuthResult): string {
  if (r.kind !== 'authenticated') throw new Error(`expected authenticated, got ${JSON.stringify(r)}`);
  return r.principal.user;
}

describe('AuthCache', () => {
  it('serves an entry until, and not at, the end of its TTL', () => {
    let now = T0;
    const cache = new AuthCache({ ttlMs: TTL }, () => now);
    cache.set('k', principal('alice', null));
    now = T0 + TTL - 1;
    expect(cache.get('k')?.user).toBe('alice');
    now = T0 + TTL;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never serves a principal at or past its credential expiry, even within the TTL', () => {
    let now = T0;
    const cache = new AuthCache({ ttlMs: TTL }, () => now);
    cache.set('k', principal('alice', T0 + 10));
    now = T0 + 9;
    expect(cache.get('k')?.user).toBe('alice');
    now = T0 + 10;
    expect(cache.get('k')).toBeUndefined();
    // An already expired credential is not stored at all.
    cache.set('gone', principal('bob', T0 + 10));
    expect(cache.size).toBe(0);
  });

  it('drops the least recently used entry beyond its bound', () => {
    const cache = new AuthCache({ ttlMs: TTL, maxEntries: 2 }, () => T0);
    cache.set('a', principal('a', null));
    cache.set('b', principal('b', null));
    expect(cache.get('a')?.user).toBe('a'); // a is now the most recently used
    cache.set('c', principal('c', null));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.user).toBe('a');
    expect(cache.get('c')?.user).toBe('c');
  });

  it('forgets an earlier principal when the same key is set again already expired', () => {
    const cache = new AuthCache({ ttlMs: TTL, maxEntries: 1 }, () => T0);
    cache.set('k', principal('before', null));
    cache.set('k', principal('after', T0));
    expect(cache.get('k')).toBeUndefined();
  });

  it('stores nothing with a TTL of 0, and refuses nonsense options', () => {
    const cache = new AuthCache({ ttlMs: 0 }, () => T0);
    cache.set('a', principal('a', null));
    expect(cache.get('a')).toBeUndefined();
    expect(() => new AuthCache({ ttlMs: -1 })).toThrow(/Invalid auth cache options/);
    expect(() => new AuthCache({ maxEntries: 1.5 })).toThrow(/Invalid auth cache options/);
  });

  it('agrees with a model: a hit is the latest principal set for that key, within TTL and before expiry', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 5 }), expiresIn: fc.option(fc.integer({ min: -5, max: 8000 })) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), (ops, maxEntries) => {
        let now = T0;
        const cache = new AuthCache({ ttlMs: TTL, maxEntries }, () => now);
        const model = new Map<number, { user: string; setAt: number; expiresAt: number | null }>();
        let serial = 0;
        for (const o of ops) {
          if (o.kind === 'tick') now += o.ms;
          else if (o.kind === 'set') {
            const user = `u${o.key}-${serial++}`;
            const expiresAt = o.expiresIn === null ? null : now + o.expiresIn;
            cache.set(`key${o.key}`, principal(user, expiresAt));
            model.set(o.key, { user, setAt: now, expiresAt });
          } else {
            const got = cache.get(`key${o.key}`);
            const m = model.get(o.key);
            if (got === undefined) continue; // evicted or expired: a miss is always allowed
            // A hit: the latest principal of this key, within its TTL, before its expiry.
            expect(m).toBeDefined();
            expect(got.user).toBe(m!.user);
            expect(now).toBeLessThan(m!.setAt + TTL);
            if (m!.expiresAt !== null) expect(now).toBeLessThan(m!.expiresAt);
          }
        }
        expect(cache.size).toBeLessThanOrEqual(maxEntries);
      }),
    );
  });
});

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`the authenticator's cache on ${dialect}`, () => {
    let location: Location;
    let database: DatabaseHandle;
    let auth: Auth;
    let now = T0;
    const authenticate = (header: string) => auth.authenticator.authenticate(header);

    beforeAll(async () => {
      location = await newLocation(dialect);
      const config = parseConfig({
        server: { hostname: 'scans.example.com' },
        database: location.url !== undefined ? { url: location.url } : { data: location.data },
        // Every wrong password here must be checked, not limited (that is sign-in-limits.test.ts).
        auth: { signInLimits: { userAndClient: 1000, client: 100_000 } },
      });
      database = await openDatabase(config.database);
      auth = await openAuth(database, config, () => now, { ttlMs: TTL });
      await auth.users.addUser({ name: 'alice', password: 'alice-pw', permissions: ['accessBuildDataViaApi'] });
      await auth.users.addUser({ name: 'bob', password: 'alice-pw', permissions: ['exportData'], projects: ['b'] });
    });
    afterAll(async () => {
      await database?.close();
      await location?.cleanup();
    });

    it('serves an access key until exactly its expiry, then answers "expired"', async () => {
      now = T0;
      const { key } = await auth.users.createAccessKey('alice', { expiresAt: T0 + 1000 });
      expect(userOf(await authenticate(bearer(key)))).toBe('alice');
      now = T0 + 999;
      expect(userOf(await authenticate(bearer(key)))).toBe('alice');
      now = T0 + 1000;
      expect(await authenticate(bearer(key))).toEqual({ kind: 'rejected', reason: 'access key expired' });
    });

    it('serves an access token until exactly its expiry, then answers "expired"', async () => {
      now = T0;
      const token = await auth.tokens.issue({ user: 'alice', permissions: ['accessBuildDataViaApi'], projects: null, expiresAt: T0 + 2000 });
      expect(userOf(await authenticate(bearer(token)))).toBe('alice');
      now = T0 + 1999;
      expect(userOf(await authenticate(bearer(token)))).toBe('alice');
      now = T0 + 2000;
      expect(await authenticate(bearer(token))).toEqual({ kind: 'rejected', reason: 'access token expired' });
    });

    it('keeps keys and tokens of different users apart, in plain and base64 form', async () => {
      now = T0 + 10_000;
      const a = (await auth.users.createAccessKey('alice', { expiresAt: T0 + 86_400_000 })).key;
      const b = (await auth.users.createAccessKey('bob', { expiresAt: T0 + 86_400_000 })).key;
      const ta = await auth.tokens.issue({ user: 'alice', permissions: ['accessBuildDataViaApi'], projects: null, expiresAt: T0 + 3_600_000 });
      const tb = await auth.tokens.issue({ user: 'bob', permissions: ['exportData'], projects: ['b'], expiresAt: T0 + 3_600_000 });
      for (let round = 0; round < 3; round++) {
        expect(userOf(await authenticate(bearer(a)))).toBe('alice');
        expect(userOf(await authenticate(bearer(b)))).toBe('bob');
        expect(userOf(await authenticate(bearer(Buffer.from(a).toString('base64'))))).toBe('alice');
        expect(userOf(await authenticate(bearer(Buffer.from(b).toString('base64'))))).toBe('bob');
        expect(userOf(await authenticate(bearer(ta)))).toBe('alice');
        const rb = await authenticate(bearer(tb));
        expect(userOf(rb)).toBe('bob');
        expect(rb.kind === 'authenticated' && rb.principal.projects).toEqual(['b']);
        // Same password, other user: the user name is part of the cache key.
        expect(userOf(await authenticate(basic('alice', 'alice-pw')))).toBe('alice');
        expect(userOf(await authenticate(basic('bob', 'alice-pw')))).toBe('bob');
      }
    });

    it('rejects a wrong password after a right one, and a right one after a wrong one', async () => {
      now = T0 + 20_000;
      expect(userOf(await authenticate(basic('alice', 'alice-pw')))).toBe('alice');
      for (const wrong of ['alice-pW', 'alice-pw ', 'alice-p', '', 'bob-pw']) {
        expect(await authenticate(basic('alice', wrong))).toEqual({ kind: 'rejected', reason: 'wrong user name or password' });
      }
      // A colon moves between user and password: another pair, not a hit.
      expect((await authenticate(basic('alice:alice', '-pw'))).kind).toBe('rejected');
      expect(await authenticate(basic('nobody', 'alice-pw'))).toEqual({ kind: 'rejected', reason: 'wrong user name or password' });
      expect(userOf(await authenticate(basic('alice', 'alice-pw')))).toBe('alice');
    });

    it('reuses a success for at most the TTL: a revoked key and a changed password stop working after it', async () => {
      now = T0 + 30_000;
      const { key } = await auth.users.createAccessKey('bob', { expiresAt: T0 + 86_400_000 });
      expect(userOf(await authenticate(bearer(key)))).toBe('bob');
      expect(userOf(await authenticate(basic('bob', 'alice-pw')))).toBe('bob');
      await database.db.deleteFrom('auth_access_key').where('user_name', '=', 'bob').execute();
      await database.db.updateTable('auth_user').set({ password_hash: await hashPassword('new-pw') }).where('name', '=', 'bob').execute();
      now += TTL - 1;
      expect(userOf(await authenticate(bearer(key)))).toBe('bob');
      expect(userOf(await authenticate(basic('bob', 'alice-pw')))).toBe('bob');
      now += 1;
      expect(await authenticate(bearer(key))).toEqual({ kind: 'rejected', reason: 'unknown access key' });
      expect(await authenticate(basic('bob', 'alice-pw'))).toEqual({ kind: 'rejected', reason: 'wrong user name or password' });
      expect(userOf(await authenticate(basic('bob', 'new-pw')))).toBe('bob');
    });

    it('does not remember failures: unknown credentials are rejected every time', async () => {
      now = T0 + 40_000;
      const fake = 'bsk_' + 'x'.repeat(40);
      for (let i = 0; i < 3; i++) {
        expect(await authenticate(bearer(fake))).toEqual({ kind: 'rejected', reason: 'unknown access key' });
        expect(await authenticate(basic('alice', 'nope'))).toEqual({ kind: 'rejected', reason: 'wrong user name or password' });
      }
    });
  });
}

describe('repeated Basic requests over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(await newLocation('sqlite'));
    await s.user('carol', ['accessBuildDataViaApi'], { password: 'carol-secret' });
  });
  afterAll(() => s?.close());

  it('answer 200 for the right password and 401 for a wrong one sent right after', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await s.get('/api/builds?maxBuilds=1', basic('carol', 'carol-secret'))).status).toBe(200);
      const wrong = await s.get('/api/builds?maxBuilds=1', basic('carol', 'carol-secreT'));
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { detail: string }).detail).toMatch(/wrong user name or password/);
    }
  });
});
