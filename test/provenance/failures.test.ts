// Failure statuses over real HTTP: 429 when the evaluation pool is exhausted under concurrent load,
// 500 with the external-service detail when a store or the build analytics server is down, and the
// standalone service reading builds over the server's REST API.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { buildStandaloneApp } from '../../src/server.js';
import { openDatabase } from '../../src/db/database.js';
import { openAuth } from '../../src/auth/index.js';
import { buildLine, call, freePort, logger, nginxBinary, startNginx, startProvenanceServer, type Nginx, type ProvenanceServer } from './harness.js';
import { CLI } from '../support/compiled-cli.js';

const SHA = 'e'.repeat(64);
const REPO = 'registry.example.com/team/app';
const PREFIX = 'An error occurred while trying to communicate with an external service:';
const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: provenance, labels: { gate: ci } }
spec: { description: Provenance exists, remediation: Publish it, predicateTypes: ['https://slsa.dev/provenance/v1'] }
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: ci }
spec: { selector: { matchLabels: { gate: ci } } }
`;

describe.skipIf(!nginxBinary())('429 under concurrent load', () => {
  let nginx: Nginx;
  let server: ProvenanceServer;
  let auth: string;

  beforeAll(async () => {
    nginx = await startNginx();
    server = await startProvenanceServer((dir) => {
      const file = join(dir, 'policies.yaml');
      writeFileSync(file, POLICIES);
      return { stores: [{ id: 'repo:central', url: nginx.url, listCacheMs: 0 }], policies: file, pool: { size: 1, queue: 1 } };
    });
    auth = (await server.user('ci', ['evaluatePolicies'])).bearer;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await nginx?.stop();
  });

  it('answers 429 with the seed detail and Retry-After when the pool and its queue are full, 200 otherwise', { timeout: 120_000 }, async () => {
    const url = `${server.url}/packages/oci/app/1.0/policy-scans/ci`;
    const results = await Promise.all(Array.from({ length: 30 }, () => call('POST', url, { auth, json: { sha256: SHA, repositoryUrl: REPO } })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    const refused = results.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    for (const r of refused) {
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body).toEqual({ type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'The service is experiencing too many requests. Please try again later.' });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    // It clears at once when the load is gone.
    expect((await call('POST', url, { auth, json: { sha256: SHA, repositoryUrl: REPO } })).status).toBe(200);
  });
});

describe('500 when a store is down', { timeout: 60_000 }, () => {
  let server: ProvenanceServer;
  let auth: string;
  let deadPort: number;

  beforeAll(async () => {
    deadPort = await freePort();
    server = await startProvenanceServer((dir) => {
      const file = join(dir, 'policies.yaml');
      writeFileSync(file, POLICIES);
      return { stores: [{ id: 'obj:main', directory: join(dir, 'objects') }, { id: 'repo:down', url: `http://127.0.0.1:${deadPort}/repo`, timeoutMs: 2000 }], policies: file };
    });
    await server.store.ingestNdjson(buildLine('build00000001'));
    auth = (await server.user('all', ['publishAttestations', 'evaluatePolicies', 'readAttestations'])).bearer;
  }, 120_000);
  afterAll(async () => server?.close());

  it('publish, evaluate and fetch answer 500 naming the artifact repository', async () => {
    const publish = await call('POST', `${server.url}/packages/oci/app/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
    expect(publish.status).toBe(500);
    expect(publish.type).toMatch(/^application\/problem\+json/);
    expect(publish.body).toMatchObject({ type: 'about:blank', title: 'Internal Server Error', status: 500 });
    expect(publish.body.detail.startsWith(`${PREFIX} artifact repository repo:down`)).toBe(true);
    expect(publish.body.detail).toContain('ECONNREFUSED');
    const evaluate = await call('POST', `${server.url}/packages/oci/app/1.0/policy-scans/ci`, { auth, json: { sha256: SHA, repositoryUrl: REPO } });
    expect(evaluate.status).toBe(500);
    expect(evaluate.body.detail.startsWith(PREFIX)).toBe(true);
    const fetched = await call('GET', `${server.url}/packages/oci/app/1.0/sha256:${SHA}/attestations/repo:down/${'1'.repeat(64)}`, { auth });
    expect(fetched.status).toBe(500);
    expect(fetched.body.detail.startsWith(PREFIX)).toBe(true);
    // NDJSON publishing: the object store write is already streamed when the repository fails, so the
    // stream ends with a FAILURE line carrying the same detail.
    const nd = await call('POST', `${server.url}/packages/oci/app/1.0/attestations`, { auth, accept: 'application/x-ndjson', json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
    expect(nd.status).toBe(200);
    expect(nd.body[0]).toMatchObject({ status: 'SUCCESS', details: { store: 'obj:main' } });
    expect(nd.body.at(-1).status).toBe('FAILURE');
    expect(nd.body.at(-1).detail.startsWith(`${PREFIX} artifact repository repo:down`)).toBe(true);
  });

  it('an object store whose directory is gone is a 500, not an empty result', async () => {
    rmSync(join(server.dir, 'objects'), { recursive: true, force: true });
    const r = await call('GET', `${server.url}/packages/oci/app/1.0/sha256:${SHA}/attestations/obj:main/${'1'.repeat(64)}`, { auth });
    expect(r.status).toBe(500);
    expect(r.body.detail).toMatch(new RegExp(`^${PREFIX} object store obj:main`));
  });
});

describe('standalone provenance service over the REST API', { timeout: 60_000 }, () => {
  let analytics: ProvenanceServer;
  let dir: string;
  let standalone: Awaited<ReturnType<typeof buildStandaloneApp>>;
  let url: string;
  let auth: string;
  let appOnly: string;
  let serverKey: string;

  beforeAll(async () => {
    analytics = await startProvenanceServer(() => ({}));
    await analytics.store.ingestNdjson([buildLine('build00000001', { project: 'app' }), buildLine('build00000002', { toolType: 'pybuild', toolVersion: '1.2', project: 'tools' })].join('\n'));
    serverKey = (await analytics.user('provenance', ['accessBuildDataViaApi'])).key;
    dir = mkdtempSync(join(tmpdir(), 'bs-standalone-'));
    const config = parseConfig({ provenance: { repositoryAccess: { app: [REPO] } } }, { data: dir });
    standalone = await buildStandaloneApp({ config, serverUrl: analytics.url, accessKey: serverKey, logger });
    url = await standalone.app.listen({ host: '127.0.0.1', port: 0 });
    const database = await openDatabase(config.database);
    const a = await openAuth(database, config);
    await a.users.addUser({ name: 'ci', password: 'pw-ci', permissions: ['publishAttestations', 'readAttestations'], projects: null });
    auth = `Basic ${Buffer.from('ci:pw-ci').toString('base64')}`;
    await a.users.addUser({ name: 'app-only', password: 'pw-app', permissions: ['publishAttestations'], projects: ['app'] });
    appOnly = `Basic ${Buffer.from('app-only:pw-app').toString('base64')}`;
    await database.close();
  }, 120_000);
  afterAll(async () => {
    await standalone?.close();
    await analytics?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('publishes from builds read by id and by query over the server API; fetch works', async () => {
    const r = await call('POST', `${url}/packages/oci/app/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'], queries: ['buildTool:pybuild'] } } });
    expect(r.status).toBe(200);
    expect(new Set(r.body.map((x: any) => x.details.buildId))).toEqual(new Set(['build00000001', 'build00000002']));
    expect(r.body.every((x: any) => x.details.store === 'obj:default')).toBe(true);
    const f = await call('GET', `${url}${r.body[0].details.attestationUri}`, { auth });
    expect(f.status).toBe(200);
    const bad = await call('POST', `${url}/packages/oci/app/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['zzzzzzzzzzzzz'] } } });
    expect(bad.status).toBe(400);
    const badQuery = await call('POST', `${url}/packages/oci/app/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { queries: ['nosuchfield:1'] } } });
    expect(badQuery.status).toBe(400);
    expect((await call('POST', `${url}/packages/oci/app/1.0/attestations`, { json: { sha256: SHA, repositoryUrl: REPO } })).status).toBe(401);
  });

  it("a caller restricted to a project publishes only from that project's builds, though the service's key sees more", async () => {
    const publish = (buildScan: unknown) => call('POST', `${url}/packages/oci/app/2.0/attestations`, { auth: appOnly, json: { sha256: SHA, repositoryUrl: REPO, buildScan } });
    const own = await publish({ ids: ['build00000001'] });
    expect(own.status).toBe(200);
    expect(new Set(own.body.map((x: any) => x.details.buildId))).toEqual(new Set(['build00000001']));
    // build00000002 is of project tools: answered as an ID that does not exist.
    const other = await publish({ ids: ['build00000002'] });
    const unknown = await publish({ ids: ['build0000000z'] });
    expect(other.status).toBe(400);
    expect(other.text.split('build00000002').join('<id>')).toBe(unknown.text.split('build0000000z').join('<id>'));
    const byQuery = await publish({ queries: ['buildTool:pybuild'] });
    expect(byQuery.status).toBe(200);
    expect(byQuery.body).toEqual([]);
  });

  it('an unreachable build analytics server is a 500 with the external-service detail', async () => {
    await analytics.close();
    const r = await call('POST', `${url}/packages/oci/app/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
    expect(r.status).toBe(500);
    expect(r.body.detail.startsWith(`${PREFIX} build analytics server ${analytics.url}`)).toBe(true);
    analytics = undefined as unknown as ProvenanceServer;
  });

  it('`buildscope provenance --server URL --access-key K --port 0` starts and answers', { timeout: 180_000 }, async () => {
    const data = mkdtempSync(join(tmpdir(), 'bs-standalone-cli-'));
    const child = spawn(process.execPath, [...CLI, 'provenance', '--server', 'http://127.0.0.1:9', '--access-key', 'k', '--port', '0', '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /listening on (\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
        setTimeout(() => reject(new Error('no start')), 150_000);
      });
      const keys = await call('GET', `${address}/provenance/keys`);
      expect(keys.status).toBe(200);
      expect(keys.body.keys[0].keyid).toMatch(/^[0-9a-f]{64}$/);
      const r = await call('POST', `${address}/packages/oci/app/1.0/attestations`, { json: { sha256: SHA, repositoryUrl: REPO } });
      expect(r.status).toBe(401);
    } finally {
      child.kill('SIGTERM');
      rmSync(data, { recursive: true, force: true });
    }
  });
});
