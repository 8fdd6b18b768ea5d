// Access keys survive every common parser: letters and digits only (lowercase base32 after the
// prefix), so a CI action that accepts `[A-Za-z0-9]` keys in `host=key;host=key` lists takes every
// one of them. Keys of the earlier `bsk_` + base64url shape keep working.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashAccessKey, isAccessKeyShape } from '../../src/auth/users.js';
import { bearer, newLocation, startTestServer, type TestServer } from './support.js';

/** The rule of the CI action's parser of `host=key;host2=key2`: keys of letters and digits. */
function parseAccessKeys(raw: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const entry of raw.split(';')) {
    const parts = entry.split('=');
    if (parts.length !== 2 || !/^[A-Za-z0-9]+$/.test(parts[1]!)) return undefined;
    out.set(parts[0]!, parts[1]!);
  }
  return out;
}

describe('access keys', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(await newLocation('sqlite'));
  });
  afterAll(() => s?.close());

  it('are letters and digits only: bsk and 52 lowercase base32 characters, each accepted by a strict key parser', async () => {
    await s.auth.users.addUser({ name: 'ci', password: 'ci-password', permissions: ['accessBuildDataViaApi'], projects: null });
    const keys: string[] = [];
    for (let i = 0; i < 40; i++) keys.push((await s.auth.users.createAccessKey('ci', { expiresAt: Date.now() + 86_400_000 })).key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) {
      expect(key).toMatch(/^bsk[a-z2-7]{52}$/);
      expect(parseAccessKeys(`scans.example.com=${key};other.example.com=${key}`)?.get('scans.example.com')).toBe(key);
    }
    // Every character of the alphabet turns up (the key is not confined to a subset).
    expect(new Set(keys.flatMap((k) => [...k.slice(3)])).size).toBe(32);
    for (const key of keys.slice(0, 5)) {
      expect((await s.get('/api/builds?since=0&maxBuilds=0', bearer(key))).status).toBe(200);
      expect((await s.get('/api/builds?since=0&maxBuilds=0', bearer(Buffer.from(key).toString('base64')))).status).toBe(200);
    }
  });

  it('made in the earlier shape (bsk_ + 40 base64url characters, with - and _) are still accepted', async () => {
    await s.auth.users.addUser({ name: 'old', password: 'old-password', permissions: ['accessBuildDataViaApi'], projects: null });
    const legacy = 'bsk_' + 'Ab3-_x'.repeat(6) + 'Zz9-';
    expect(legacy).toHaveLength(44);
    expect(isAccessKeyShape(legacy)).toBe(true);
    await s.database.db
      .insertInto('auth_access_key' as never)
      .values({ key_hash: hashAccessKey(legacy), user_name: 'old', prefix: legacy.slice(0, 8), created_at: Date.now(), expires_at: Date.now() + 86_400_000 } as never)
      .execute();
    expect((await s.get('/api/builds?since=0&maxBuilds=0', bearer(legacy))).status).toBe(200);
    expect((await s.get('/api/builds?since=0&maxBuilds=0', bearer(Buffer.from(legacy).toString('base64')))).status).toBe(200);
    expect((await s.get('/api/builds?since=0&maxBuilds=0', bearer(legacy.replace('Ab3', 'Ab4')))).status).toBe(401);
  });
});
