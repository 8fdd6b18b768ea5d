// Every 401 of every face of the server carries the same WWW-Authenticate challenge, built by one
// helper (challengeOf): the REST API, the web app's API and its sign-in, access tokens, metrics,
// the export streams and the provenance service. Without credentials the challenge is the bare
// one; with refused credentials it adds RFC 6750's error="invalid_token". (The cache node, a
// separate product, challenges Basic for build tools; the cache registry its NodeKey scheme.)

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { provenancePlugin } from '../../src/http/provenance-plugin.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { newLocation, startTestServer, type TestServer } from './support.js';

const SHA = 'a'.repeat(64);
const BODY = JSON.stringify({ sha256: SHA, repositoryUrl: 'registry.example.com/app' });

/** One request per face; `json` bodies are sent with their content type. */
const REQUESTS: readonly { readonly face: string; readonly method: string; readonly path: string; readonly json?: string }[] = [
  { face: 'REST builds', method: 'GET', path: '/api/builds?since=0' },
  { face: 'REST build', method: 'GET', path: '/api/builds/abcdefghijklm' },
  { face: 'REST ingest', method: 'POST', path: '/api/builds' },
  { face: 'web search', method: 'GET', path: '/api/search/count' },
  { face: 'field values', method: 'GET', path: '/api/search/values?field=tag' },
  { face: 'access token', method: 'POST', path: '/api/auth/token' },
  { face: 'metrics', method: 'GET', path: '/metrics' },
  { face: 'export v1', method: 'GET', path: '/build-export/v1/builds/since/0' },
  { face: 'export v2', method: 'GET', path: '/build-export/v2/build/abcdefghijklm/events' },
  { face: 'provenance publish', method: 'POST', path: '/packages/oci/app/1.0/attestations', json: BODY },
  { face: 'provenance evaluate', method: 'POST', path: '/packages/oci/app/1.0/policy-scans/release', json: BODY },
  { face: 'provenance fetch', method: 'GET', path: `/packages/oci/app/1.0/sha256:${SHA}/attestations/obj:main/abc` },
];

let s: TestServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bs-challenge-'));
  mkdirSync(join(dir, 'keys'));
  writeFileSync(join(dir, 'policies.yaml'), 'apiVersion: policy.buildscope.dev/v1\nkind: PolicyScan\nmetadata: { name: release }\nspec: { selector: { matchLabels: { scan: release } } }\n');
  s = await startTestServer(await newLocation('sqlite'), {
    plugins: [sessionPlugin, exportPlugin, provenancePlugin],
    raw: {
      provenance: { keys: { directory: join(dir, 'keys') }, stores: [{ id: 'obj:main', directory: join(dir, 'objects') }], policies: join(dir, 'policies.yaml') },
      // Every wrong password here must be checked and answered 401, not limited (429: sign-in-limits.test.ts).
      auth: { signInLimits: { userAndClient: 1000, client: 100_000 } },
    },
  });
  await s.user('alice', ['accessBuildDataViaApi']);
}, 60_000);
afterAll(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function challenges(authorization: string | undefined): Promise<Map<string, string | null>> {
  const seen = new Map<string, string | null>();
  for (const r of REQUESTS) {
    const headers: Record<string, string> = { ...(authorization ? { authorization } : {}), ...(r.json ? { 'content-type': 'application/json' } : {}) };
    const res = await fetch(`${s.url}${r.path}`, { method: r.method, headers, ...(r.json ? { body: r.json } : {}) });
    await res.arrayBuffer();
    expect(res.status, `${r.face} ${r.method} ${r.path}`).toBe(401);
    seen.set(r.face, res.headers.get('www-authenticate'));
  }
  return seen;
}

describe('every 401 carries the same challenge', () => {
  it('without credentials', async () => {
    const seen = await challenges(undefined);
    expect(new Set(seen.values()), JSON.stringify([...seen])).toEqual(new Set(['Bearer realm="buildscope"']));
  });

  it('with refused credentials (an unknown key, a wrong password)', async () => {
    for (const authorization of [`Bearer bsk_${'x'.repeat(40)}`, `Basic ${Buffer.from('alice:wrong').toString('base64')}`]) {
      const seen = await challenges(authorization);
      expect(new Set(seen.values()), JSON.stringify([...seen])).toEqual(new Set(['Bearer realm="buildscope", error="invalid_token"']));
    }
  });

  it('signing in with a wrong password and asking who is signed in with wrong credentials', async () => {
    const signIn = await fetch(`${s.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', password: 'wrong' }) });
    expect(signIn.status).toBe(401);
    expect(signIn.headers.get('www-authenticate')).toBe('Bearer realm="buildscope", error="invalid_token"');
    const who = await fetch(`${s.url}/api/session`, { headers: { authorization: `Basic ${Buffer.from('alice:wrong').toString('base64')}` } });
    expect(who.status).toBe(401);
    expect(who.headers.get('www-authenticate')).toBe('Bearer realm="buildscope", error="invalid_token"');
  });
});
