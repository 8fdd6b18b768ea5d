// POST /api/auth/token per seed 002, over real HTTP, on SQLite and PostgreSQL.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { pgAvailable } from '../support/postgres.js';
import { basic, bearer, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

const HOUR = 3600_000;

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`POST /api/auth/token on ${dialect}`, () => {
    let s: TestServer;
    let key: string; // every permission except manageCacheNodes, no project-level control
    let projKey: string; // projects a, b, c
    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      key = await s.user('alice', ['accessBuildDataViaApi', 'publishScan', 'exportData', 'writeCache', 'readCache']);
      projKey = await s.user('pat', ['accessBuildDataViaApi', 'publishScan'], { projects: ['a', 'b', 'c'] });
    });
    afterAll(() => s?.close());

    const post = (query: string, authorization?: string, init: RequestInit = {}) =>
      fetch(`${s.url}/api/auth/token${query}`, { method: 'POST', ...init, headers: { ...(authorization ? { authorization } : {}), ...(init.headers ?? {}) } });

    it('answers the JWT as text/plain, bound to the hostname, with a default life of 2 hours', async () => {
      const before = Date.now();
      const r = await post('', bearer(key));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
      const jwt = await r.text();
      expect(jwt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const c = decodeJwt(jwt);
      expect(c.iss).toBe('scans.example.com');
      expect(c.aud).toBe('scans.example.com');
      expect(c.sub).toBe('alice');
      expect(c['perm']).toEqual(['accessBuildDataViaApi', 'exportData', 'publishScan', 'readCache', 'writeCache', 'accessDataWithoutAssociatedProject']);
      expect(c.exp! * 1000).toBeGreaterThanOrEqual(Math.floor((before + 2 * HOUR) / 1000) * 1000);
      expect(c.exp! * 1000).toBeLessThanOrEqual(Date.now() + 2 * HOUR);
    });

    it('accepts the access key base64-encoded after Bearer', async () => {
      const r = await post('', bearer(Buffer.from(key).toString('base64')));
      expect(r.status).toBe(200);
    });

    it('merges comma-separated and repeated permissions', async () => {
      const c = decodeJwt(await s.token(key, '?permissions=publishScan,exportData&permissions=readCache&permissions=publishScan'));
      expect(c['perm']).toEqual(['exportData', 'publishScan', 'readCache', 'accessDataWithoutAssociatedProject']);
    });

    it('gives every token accessDataWithoutAssociatedProject without project-level access control', async () => {
      const c = decodeJwt(await s.token(key, '?permissions=writeCache'));
      expect(c['perm']).toEqual(['writeCache', 'accessDataWithoutAssociatedProject']);
      expect(c['proj']).toBeUndefined();
    });

    it('merges comma-separated and repeated projectIds and defaults to all projects of the credential', async () => {
      expect(decodeJwt(await s.token(projKey, '?projectIds=a,b&projectIds=c'))['proj']).toEqual(['a', 'b', 'c']);
      expect(decodeJwt(await s.token(projKey, '?projectIds=b'))['proj']).toEqual(['b']);
      const all = decodeJwt(await s.token(projKey));
      expect(all['proj']).toEqual(['a', 'b', 'c']);
      // Under project-level control the permission is not added.
      expect(all['perm']).toEqual(['accessBuildDataViaApi', 'publishScan']);
    });

    it('answers 403 for a permission or a project the credential lacks', async () => {
      const r1 = await post('?permissions=manageCacheNodes', bearer(key));
      expect(r1.status).toBe(403);
      expect(r1.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const p1 = await r1.json();
      expect(p1).toMatchObject({ type: 'urn:buildscope:problem:forbidden', title: 'Forbidden', status: 403 });
      expect(p1.detail).toContain('manageCacheNodes');
      const r2 = await post('?projectIds=a,z', bearer(projKey));
      expect(r2.status).toBe(403);
      expect((await r2.json()).detail).toContain('z');
      const r3 = await post('?permissions=accessDataWithoutAssociatedProject', bearer(projKey));
      expect(r3.status).toBe(403);
    });

    it('checks the grants of the token, not of the user, when a token authenticates', async () => {
      const narrow = await s.token(key, '?permissions=publishScan');
      expect((await post('?permissions=exportData', bearer(narrow))).status).toBe(403);
      expect((await post('?permissions=publishScan', bearer(narrow))).status).toBe(200);
      const onlyA = await s.token(projKey, '?projectIds=a');
      expect((await post('?projectIds=b', bearer(onlyA))).status).toBe(403);
      expect(decodeJwt(await s.token(onlyA))['proj']).toEqual(['a']);
    });

    it('answers 403 for an unknown permission name, as for one the credential lacks', async () => {
      const r = await post('?permissions=flyToTheMoon', bearer(key));
      expect(r.status).toBe(403);
      const p = await r.json();
      expect(p.detail).toContain('flyToTheMoon');
      expect(p.detail).toContain('accessBuildDataViaApi'); // the known names, for a typo
      expect((await post('?permissions=publishScan,flyToTheMoon', bearer(key))).status).toBe(403);
    });

    it('accepts decimal lifetimes above 0 (0.5 hours), as the public spec does; integers keep working', async () => {
      const before = Date.now();
      const half = decodeJwt(await s.token(key, '?expiresInHours=0.5'));
      expect(half.exp! * 1000).toBeGreaterThanOrEqual(Math.floor((before + 0.5 * HOUR) / 1000) * 1000);
      expect(half.exp! * 1000).toBeLessThanOrEqual(Date.now() + 0.5 * HOUR);
      const oneAndHalf = decodeJwt(await s.token(key, '?expiresInHours=1.5'));
      expect(oneAndHalf.exp! * 1000).toBeGreaterThan(before + 1.49 * HOUR);
      expect(oneAndHalf.exp! * 1000).toBeLessThanOrEqual(Date.now() + 1.5 * HOUR);
      expect((await post('?expiresInHours=3', bearer(key))).status).toBe(200);
    });

    it('rejects lifetimes that are not a number above 0 and at most 24 hours with 400', async () => {
      for (const q of ['?expiresInHours=25', '?expiresInHours=24.5', '?expiresInHours=0', '?expiresInHours=-1', '?expiresInHours=-0.5', '?expiresInHours=two', '?expiresInHours=Infinity', '?expiresInHours=NaN', '?expiresInHours=1e400']) {
        const r = await post(q, bearer(key));
        expect(r.status, q).toBe(400);
        const p = await r.json();
        expect(p.status).toBe(400);
        expect(p.detail.length).toBeGreaterThan(10);
      }
      const ok = decodeJwt(await s.token(key, '?expiresInHours=24'));
      expect(ok.exp! * 1000).toBeGreaterThan(Date.now() + 23.9 * HOUR);
    });

    it('never outlives the credential: default capped, longer requests rejected', async () => {
      const keyExpiresAt = Date.now() + 0.5 * HOUR;
      const shortKey = await s.user('shorty', ['accessBuildDataViaApi'], { keyExpiresAt });
      const c = decodeJwt(await s.token(shortKey));
      expect(c.exp! * 1000).toBeLessThanOrEqual(keyExpiresAt);
      expect(c.exp! * 1000).toBeGreaterThan(keyExpiresAt - 5000);
      // Outliving the credential is forbidden (403, the public spec's status).
      const r = await post('?expiresInHours=1', bearer(shortKey));
      expect(r.status).toBe(403);
      expect((await r.json()).detail).toMatch(/outlive/);
      expect((await post('?expiresInHours=0.25', bearer(shortKey))).status).toBe(200);
      // A token of 1 hour cannot make a token of 2 hours.
      const oneHour = await s.token(key, '?expiresInHours=1');
      expect((await post('?expiresInHours=2', bearer(oneHour))).status).toBe(403);
      const child = decodeJwt(await s.token(oneHour));
      expect(child.exp!).toBeLessThanOrEqual(decodeJwt(oneHour).exp!);
    });

    it('needs credentials: 401 without, with wrong ones, with an expired key, and with a password', async () => {
      expect((await post('')).status).toBe(401);
      expect((await post('', bearer('bsk_' + 'x'.repeat(40)))).status).toBe(401);
      const expired = await s.user('old', ['publishScan'], { keyExpiresAt: Date.now() - 1000 });
      const r = await post('', bearer(expired));
      expect(r.status).toBe(401);
      expect((await r.json()).detail).toMatch(/expired/);
      expect((await post('', basic('alice', 'wrong'))).status).toBe(401);
      // Seed 002: tokens are requested with an access key or token.
      expect((await post('', basic('alice', 'alice-pw'))).status).toBe(401);
    });

    it('ignores a body (clients often send an empty JSON body)', async () => {
      const r = await post('', bearer(key), { headers: { 'content-type': 'application/json' }, body: '' });
      expect(r.status).toBe(200);
      const r2 = await post('', bearer(key), { headers: { 'content-type': 'text/plain' }, body: 'hello' });
      expect(r2.status).toBe(200);
    });

    it('tokens work on every server process with the same hostname, and on none after a hostname change', async () => {
      const token = await s.token(key);
      const same = await s.sibling();
      const renamed = await s.sibling({ hostname: 'new-name.example.com' });
      try {
        expect((await same.get('/api/builds?maxWaitSecs=1&maxBuilds=0', bearer(token))).status).toBe(200);
        const r = await renamed.get('/api/builds?maxBuilds=0', bearer(token));
        expect(r.status).toBe(401);
        expect((await r.json()).detail).toMatch(/hostname/);
        // Access keys are not bound to the hostname.
        expect((await renamed.get('/api/builds?maxBuilds=0', bearer(key))).status).toBe(200);
      } finally {
        await same.close();
        await renamed.close();
      }
    });
  });
}
