// The authorization matrix: every endpoint x every kind of bad or insufficient credential gets
// the right status, a problem document, and none of the data it may not see.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAvailable } from '../support/postgres.js';
import { basic, bearer, buildId, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

interface Endpoint {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  path(): string;
  readonly body?: () => string;
  readonly public?: boolean;
}

const APP_BUILD = buildId(1);
const LIB_BUILD = buildId(2);
const SECRET_PROJECT = 'app';

const ENDPOINTS: readonly Endpoint[] = [
  { name: 'POST /api/auth/token', method: 'POST', path: () => '/api/auth/token?permissions=accessBuildDataViaApi&projectIds=app' },
  { name: 'GET /api/builds', method: 'GET', path: () => '/api/builds?since=0&maxWaitSecs=1&models=attributes' },
  { name: 'GET /api/builds?query', method: 'GET', path: () => `/api/builds?since=0&maxWaitSecs=1&query=${encodeURIComponent(`project:${SECRET_PROJECT}`)}` },
  { name: 'GET /api/builds/{id}', method: 'GET', path: () => `/api/builds/${APP_BUILD}?models=attributes` },
  { name: 'POST /api/builds', method: 'POST', path: () => '/api/builds', body: () => buildLine({ id: buildId(99), project: 'app' }) },
  { name: 'GET /api/version', method: 'GET', path: () => '/api/version', public: true },
  { name: 'GET /api/openapi.json', method: 'GET', path: () => '/api/openapi.json', public: true },
];

type Case = 'no credentials' | 'wrong password' | 'unknown key' | 'expired key' | 'token without the permission' | 'token for another project' | 'token after a hostname change';

/** Expected status per endpoint and case. */
function expected(e: Endpoint, c: Case): number {
  if (e.public) return 200;
  switch (c) {
    case 'no credentials':
    case 'wrong password':
    case 'unknown key':
    case 'expired key':
    case 'token after a hostname change':
      return 401;
    case 'token without the permission':
      return 403;
    case 'token for another project':
      if (e.name === 'POST /api/auth/token') return 403;
      if (e.name === 'GET /api/builds/{id}') return 404;
      return 200; // listing: only the other project's builds; publishing is not project-bound
  }
}

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`authorization matrix on ${dialect}`, () => {
    let s: TestServer;
    const credentials = new Map<Case, string | undefined>();
    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      const admin = await s.user('admin', ['accessBuildDataViaApi', 'publishScan']);
      await s.ingest([buildLine({ id: APP_BUILD, project: 'app' }), buildLine({ id: LIB_BUILD, project: 'lib' })], bearer(admin));
      const key = await s.user('pat', ['accessBuildDataViaApi', 'publishScan', 'readCache'], { projects: ['app', 'lib'] });
      const expired = await s.user('old', ['accessBuildDataViaApi', 'publishScan'], { keyExpiresAt: Date.now() - 60_000 });
      const renamed = await s.sibling({ hostname: 'old-name.example.com' });
      const oldToken = await renamed.token(key);
      await renamed.close();
      credentials.set('no credentials', undefined);
      credentials.set('wrong password', basic('pat', 'not-the-password'));
      credentials.set('unknown key', bearer('bsk_' + 'A'.repeat(40)));
      credentials.set('expired key', bearer(expired));
      credentials.set('token without the permission', bearer(await s.token(key, '?permissions=readCache')));
      credentials.set('token for another project', bearer(await s.token(key, '?projectIds=lib')));
      credentials.set('token after a hostname change', bearer(oldToken));
    });
    afterAll(() => s?.close());

    for (const e of ENDPOINTS) {
      for (const c of ['no credentials', 'wrong password', 'unknown key', 'expired key', 'token without the permission', 'token for another project', 'token after a hostname change'] as Case[]) {
        it(`${e.name} with ${c} -> ${expected(e, c)}`, async () => {
          const authorization = credentials.get(c);
          const r = await fetch(s.url + e.path(), {
            method: e.method,
            headers: { ...(authorization ? { authorization } : {}), ...(e.body ? { 'content-type': 'application/x-ndjson' } : {}) },
            ...(e.body ? { body: e.body() } : {}),
          });
          const text = await r.text();
          expect(r.status, text).toBe(expected(e, c));
          if (r.status >= 400) {
            expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            const p = JSON.parse(text);
            expect(p).toMatchObject({ type: `urn:buildscope:problem:${({ 401: 'unauthorized', 403: 'forbidden', 404: 'not-found' } as Record<number, string>)[r.status]}`, status: r.status });
            expect(typeof p.title).toBe('string');
            expect(typeof p.detail).toBe('string');
            if (r.status === 401) expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
          }
          if (!e.public && e.name !== 'POST /api/builds') {
            // Nothing of project app leaks to anyone in this matrix (a 404 may echo the asked ID).
            if (r.status === 200) expect(text).not.toContain(APP_BUILD);
            else expect(text).not.toMatch(/availableAt|attributes|buildToolType/);
          }
          if (c === 'token for another project' && e.name.startsWith('GET /api/builds') && r.status === 200 && !e.name.includes('query')) {
            expect(text).toContain(LIB_BUILD);
          }
        });
      }
    }
  });
}
