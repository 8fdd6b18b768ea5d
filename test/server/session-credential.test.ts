// A browser session stands on the credential it was opened with: within the authentication
// cache's 5 seconds of the access key being revoked, the password changed or the user removed, the
// session stops reading, publishing and making tokens, and the tokens made with it stop working,
// in this server process and in another over the same database. Changes to other credentials of
// the user leave it alone; permissions taken from the user are taken from the session.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUTH_CACHE_TTL_MS } from '../../src/auth/index.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { pgAvailable } from '../support/postgres.js';
import { bearer, buildId, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

const TTL = DEFAULT_AUTH_CACHE_TTL_MS;

interface Session {
  readonly cookie: string;
  readonly csrf: string;
}

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`sessions and their credential on ${dialect}`, () => {
    // One clock for both server processes; moved by the tests, never slept on.
    let now = Math.floor(Date.now() / 1000) * 1000;
    let s: TestServer;
    let other: TestServer;
    let users = 0;

    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect), { plugins: [sessionPlugin], clock: () => now });
      other = await s.sibling();
    });
    afterAll(async () => {
      await other?.close();
      await s?.close();
    });

    /** A fresh user (so that the tests do not share limits or keys) with a key and a password. */
    async function newUser(permissions: Parameters<TestServer['user']>[1] = ['accessBuildDataViaApi', 'publishScan']): Promise<{ name: string; key: string; password: string }> {
      const name = `user-${++users}`;
      const password = `${name}-secret`;
      const key = await s.user(name, permissions, { password });
      return { name, key, password };
    }

    async function signIn(server: TestServer, body: Record<string, string>): Promise<Session> {
      const res = await fetch(`${server.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(200);
      const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      return { cookie, csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
    }

    const read = (server: TestServer, session: Session) => fetch(`${server.url}/api/builds?reverse=true&maxBuilds=1`, { headers: { cookie: session.cookie } });
    const mint = (server: TestServer, session: Session) =>
      fetch(`${server.url}/api/auth/token`, { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    const publish = (server: TestServer, session: Session, n: number) =>
      fetch(`${server.url}/api/builds`, {
        method: 'POST',
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/x-ndjson' },
        body: buildLine({ id: buildId(n) }) + '\n',
      });
    const readWith = (server: TestServer, token: string) => server.get('/api/builds?reverse=true&maxBuilds=1', bearer(token));

    async function expectEnded(res: Response, why: RegExp): Promise<void> {
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toMatch(why);
    }

    it('a session opened with an access key ends within 5 s of the key being revoked, with the tokens made with it, in every process', async () => {
      const u = await newUser();
      const session = await signIn(s, { accessKey: u.key });
      expect((await read(s, session)).status).toBe(200);
      expect((await read(other, session)).status).toBe(200);
      expect((await publish(s, session, 1)).status).toBe(200);
      const minted = await mint(s, session);
      expect(minted.status).toBe(200);
      const token = await minted.text();
      expect((await readWith(other, token)).status).toBe(200);
      // A token made with the key itself is the API's stateless token (docs/server.md): not bound.
      const keyToken = await s.token(u.key);

      await other.auth.users.revokeAccessKey(u.key);
      now += TTL;

      await expectEnded(await read(s, session), /session has ended.*access key .* revoked/);
      await expectEnded(await read(other, session), /session has ended/);
      await expectEnded(await publish(s, session, 2), /session has ended/);
      await expectEnded(await mint(s, session), /session has ended/);
      await expectEnded(await readWith(s, token), /access key the session was opened with was revoked/);
      await expectEnded(await readWith(other, token), /revoked/);
      const me = await fetch(`${s.url}/api/session`, { headers: { cookie: session.cookie } });
      expect(me.status).toBe(401);
      expect(me.headers.getSetCookie().some((c) => /^bs_session=;/.test(c))).toBe(true);
      expect((await readWith(s, keyToken)).status).toBe(200);
    });

    it('a session opened with a password ends within 5 s of a password change; the new password opens a new one', async () => {
      const u = await newUser();
      const session = await signIn(s, { user: u.name, password: u.password });
      expect((await read(s, session)).status).toBe(200);
      const token = await (await mint(s, session)).text();
      expect((await readWith(s, token)).status).toBe(200);

      await other.auth.users.setPassword(u.name, 'a new password');
      now += TTL;

      await expectEnded(await read(s, session), /password the session was opened with was changed/);
      await expectEnded(await read(other, session), /session has ended/);
      await expectEnded(await readWith(s, token), /password .* was changed/);
      const again = await signIn(s, { user: u.name, password: 'a new password' });
      expect((await read(s, again)).status).toBe(200);
      expect((await read(other, again)).status).toBe(200);
    });

    it('sessions end within 5 s of their user being removed', async () => {
      const u = await newUser();
      const byPassword = await signIn(s, { user: u.name, password: u.password });
      const byKey = await signIn(other, { accessKey: u.key });
      expect((await read(s, byPassword)).status).toBe(200);
      expect((await read(s, byKey)).status).toBe(200);

      await s.auth.users.removeUser(u.name);
      now += TTL;

      await expectEnded(await read(s, byPassword), /user of the session was removed/);
      await expectEnded(await read(s, byKey), /session has ended/);
      await expectEnded(await read(other, byPassword), /session has ended/);
    });

    it('a permission taken from the user is taken from her session within 5 s', async () => {
      const u = await newUser();
      const session = await signIn(s, { user: u.name, password: u.password });
      expect((await read(s, session)).status).toBe(200);
      await s.database.db.updateTable('auth_user').set({ permissions: JSON.stringify(['publishScan']) }).where('name', '=', u.name).execute();
      now += TTL;
      expect((await read(s, session)).status).toBe(403);
      expect((await publish(s, session, 3)).status).toBe(200);
    });

    it("other credentials of the user may change: a key session outlives a password change and another key's revocation, a password session a key's revocation", async () => {
      const u = await newUser();
      const second = (await s.auth.users.createAccessKey(u.name, { expiresAt: now + 86_400_000 })).key;
      const byKey = await signIn(s, { accessKey: u.key });
      const byPassword = await signIn(s, { user: u.name, password: u.password });

      await s.auth.users.revokeAccessKey(second);
      now += TTL;
      expect((await read(s, byKey)).status).toBe(200);
      expect((await read(s, byPassword)).status).toBe(200);

      await s.auth.users.setPassword(u.name, 'changed');
      now += TTL;
      expect((await read(s, byKey)).status).toBe(200);
      expect((await read(other, byKey)).status).toBe(200);
      await expectEnded(await read(s, byPassword), /password .* was changed/);
    });
  });
}
