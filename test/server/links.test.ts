// Links the server writes lead somewhere: attestations' buildUri (and so evaluation's
// sourcedFromUri) take the server's public address (`server.publicUrl`, else the address it
// listens on, never a fixed port 5080), and `/s/<id>` (what the export sample client prints)
// redirects to the build page `/builds/<id>`.
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, publicUrlOf } from '../../src/config.js';
import { provenancePlugin } from '../../src/http/provenance-plugin.js';
import { BUILD_TOOL_PREDICATE } from '../../src/provenance/predicates.js';
import { buildLine, newLocation, startTestServer, type TestServer } from './support.js';

const SHA = 'a'.repeat(64);
const REPO = 'registry.example.com/app';
const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: BuildToolPolicy
metadata: { name: approved-build-tools, labels: { scan: release } }
spec:
  description: Builds use an approved build tool.
  remediation: none
  tools:
    - { type: native, versions: ['*'] }
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: release }
spec: { selector: { matchLabels: { scan: release } } }
`;

async function provenanceServer(server: Record<string, unknown> = {}): Promise<{ s: TestServer; basic: string }> {
  const location = await newLocation('sqlite');
  const dir = location.data!;
  mkdirSync(join(dir, 'pem'), { recursive: true });
  writeFileSync(join(dir, 'pem', 'own.key.pem'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'policies.yaml'), POLICIES);
  const provenance = { keys: { files: [join(dir, 'pem', 'own.key.pem')] }, stores: [{ id: 'obj:main', directory: join(dir, 'objects') }], policies: join(dir, 'policies.yaml') };
  const s = await startTestServer(location, { plugins: [provenancePlugin], raw: { provenance, ...(Object.keys(server).length > 0 ? { server } : {}) }, ...(server['publicUrl'] ? { publicUrl: server['publicUrl'] as string } : {}) });
  await s.store.ingestNdjson(buildLine({ id: 'build00000001' }));
  await s.auth.users.addUser({ name: 'pub', password: 'pub-password', permissions: ['publishAttestations', 'evaluatePolicies', 'readAttestations', 'accessBuildDataViaApi'], projects: null });
  return { s, basic: `Basic ${Buffer.from('pub:pub-password').toString('base64')}` };
}

/** Publishes for the build, then answers the buildUri of its build-tool attestation and the evaluation's sourcedFromUri. */
async function links(s: TestServer, basic: string): Promise<{ buildUri: string; sourcedFromUri: string }> {
  const headers = { authorization: basic, 'content-type': 'application/json', accept: 'application/json' };
  const published = await fetch(`${s.url}/packages/oci/app/1.0/attestations`, { method: 'POST', headers, body: JSON.stringify({ sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } }) });
  expect(published.status, await published.clone().text()).toBe(200);
  const records = (await published.json()) as { details: { predicateType: string; attestationUri: string } }[];
  const record = records.find((r) => r.details.predicateType === BUILD_TOOL_PREDICATE)!;
  const envelope = (await (await fetch(s.url + record.details.attestationUri, { headers: { authorization: basic } })).json()) as { payload: string };
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as { predicate: { buildUri: string } };
  const evaluated = await fetch(`${s.url}/packages/oci/app/1.0/policy-scans/release`, { method: 'POST', headers, body: JSON.stringify({ sha256: SHA, repositoryUrl: REPO }) });
  expect(evaluated.status, await evaluated.clone().text()).toBe(200);
  const results = (await evaluated.json()) as { sourcedFromUri: string }[];
  return { buildUri: statement.predicate.buildUri, sourcedFromUri: results[0]!.sourcedFromUri };
}

describe('links', { timeout: 60_000 }, () => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('attestations link to the build page at the address the server listens on, not a fixed port', async () => {
    const started = await provenanceServer();
    s = started.s;
    const port = new URL(s.url).port;
    expect(port).not.toBe('5080');
    const { buildUri, sourcedFromUri } = await links(s, started.basic);
    expect(buildUri).toBe(`http://127.0.0.1:${port}/builds/build00000001`);
    expect(sourcedFromUri).toBe(buildUri);
  });

  it('attestations link to the build page at server.publicUrl when it is configured', async () => {
    const started = await provenanceServer({ publicUrl: 'https://scans.example.com/ci/' });
    s = started.s;
    const { buildUri, sourcedFromUri } = await links(s, started.basic);
    expect(buildUri).toBe('https://scans.example.com/ci/builds/build00000001');
    expect(sourcedFromUri).toBe(buildUri);
  });

  it('/s/<id> redirects to /builds/<id>: relative by default, at server.publicUrl when configured', async () => {
    s = await startTestServer(await newLocation('sqlite'));
    const r = await fetch(`${s.url}/s/build00000001`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/builds/build00000001');
    const odd = await fetch(`${s.url}/s/a%20b`, { redirect: 'manual' });
    expect(odd.headers.get('location')).toBe('/builds/a%20b');
    expect((await fetch(`${s.url}/s/%00`, { redirect: 'manual' })).status).toBe(400);
    await s.close();
    s = await startTestServer(await newLocation('sqlite'), { publicUrl: 'https://scans.example.com' });
    const abs = await fetch(`${s.url}/s/build00000001`, { redirect: 'manual' });
    expect(abs.status).toBe(302);
    expect(abs.headers.get('location')).toBe('https://scans.example.com/builds/build00000001');
  });

  it('server.publicUrl must be an absolute http(s) address; the default is the listen address', () => {
    for (const bad of ['scans.example.com', 'ftp://scans.example.com', 'https://u:p@scans.example.com', 'https://scans.example.com/?x=1']) {
      expect(() => parseConfig({ server: { publicUrl: bad } }), bad).toThrow(ConfigError);
    }
    const config = parseConfig({ server: { port: 8080, hostname: 'scans.example.com' } });
    expect(publicUrlOf(config.server, null)).toBe('http://127.0.0.1:8080');
    expect(publicUrlOf(config.server, { address: '0.0.0.0', port: 9000 })).toBe('http://scans.example.com:9000');
    expect(publicUrlOf(config.server, { address: '::1', port: 9000 })).toBe('http://[::1]:9000');
  });
});
