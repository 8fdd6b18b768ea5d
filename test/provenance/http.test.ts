// The provenance service over real HTTP: a Buildscope server with the plugin, an object store in a
// temp dir and nginx (WebDAV PUT) as the artifact repository. Every seed rule and status code.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from '../../src/provenance/dsse.js';
import { generateSigningKey, publicKeyFromPem, type SigningKey } from '../../src/provenance/keys.js';
import { BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1, VULNS_PREDICATE } from '../../src/provenance/predicates.js';
import { STATEMENT_V1 } from '../../src/provenance/statement.js';
import { verifyAttestation } from '../../src/provenance/verify.js';
import { buildLine, call, nginxBinary, startNginx, startProvenanceServer, type Nginx, type ProvenanceServer } from './harness.js';
import { CLI } from '../support/compiled-cli.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);
const SHA_C = 'c'.repeat(64);
const REPO_A = 'registry.example.com/team-a/app';
const REPO_B = 'https://repo.example.com/maven2';
const DETAIL_401 = 'Full authentication is required to access this resource';
const DETAIL_403 = 'Access to this resource is forbidden';
const DETAIL_400 = 'Invalid request content. Bad criteria (sha256 or repositoryUrl).';
const DETAIL_404_FETCH = 'No attestation found matching request.';

const ownKey: SigningKey = generateSigningKey('ed25519');
const scannerKey: SigningKey = generateSigningKey('ecdsa-p256');
const strangerKey: SigningKey = generateSigningKey('ed25519');

function policies(): string {
  return `
apiVersion: policy.buildscope.dev/v1
kind: BuildToolPolicy
metadata: { name: approved-build-tools, labels: { scan: release, kind: tools } }
spec:
  description: Builds use an approved build tool version.
  remediation: Build with jvmbuild 8.x or jsbuild 2.0 or later.
  tools:
    - { type: jvmbuild, versions: ['8.*'] }
    - { type: jsbuild, minVersion: '2.0' }
---
apiVersion: policy.buildscope.dev/v1
kind: SigningKeyPolicy
metadata: { name: trusted-signers, labels: { scan: release } }
spec:
  description: Attestations are signed by the release key or the scanner.
  remediation: Re-sign with a trusted key.
  keyIds: ['${ownKey.keyid}', '${scannerKey.keyid}']
---
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: provenance-present, labels: { scan: release } }
spec:
  description: Build provenance exists.
  remediation: Publish attestations for the package.
  predicateTypes: ['${SLSA_PROVENANCE_V1}', '${BUILD_TOOL_PREDICATE}']
---
apiVersion: policy.buildscope.dev/v1
kind: VulnerabilityPolicy
metadata: { name: no-high-vulnerabilities, labels: { scan: release } }
spec:
  description: No vulnerable packages of high or critical severity.
  remediation: Upgrade the vulnerable package.
  severity: high
---
apiVersion: policy.buildscope.dev/v1
kind: SourceUriPolicy
metadata: { name: approved-sources, labels: { scan: release } }
spec:
  description: Sources come from the company git server or the package repositories.
  remediation: Build from an approved repository.
  uris: ['https://git.example.com', '${REPO_A}', '${REPO_B}']
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: release }
spec: { description: Release gate, selector: { matchLabels: { scan: release } } }
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: tools-only }
spec: { selector: { matchLabels: { kind: tools } } }
`;
}

const hasNginx = nginxBinary() !== undefined;

// Generous limits: Basic authentication hashes passwords and one test starts the CLI.
describe.skipIf(!hasNginx)('provenance over HTTP', { timeout: 120_000 }, () => {
  let nginx: Nginx;
  let server: ProvenanceServer;
  let configFile: string;
  let publisher: { bearer: string; basic: string };
  let evaluator: { bearer: string; basic: string };
  let reader: { bearer: string; basic: string };
  let teamA: { bearer: string; basic: string };
  let nobody: { bearer: string; basic: string };
  let everything: { bearer: string; basic: string };
  let published: any[] = [];

  beforeAll(async () => {
    nginx = await startNginx();
    server = await startProvenanceServer((dir) => {
      mkdirSync(join(dir, 'pem'), { recursive: true });
      writeFileSync(join(dir, 'pem', 'own.key.pem'), ownKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));
      writeFileSync(join(dir, 'pem', 'scanner.pub.pem'), scannerKey.publicKeyPem);
      writeFileSync(join(dir, 'policies.yaml'), policies());
      const provenance = {
        keys: { files: [join(dir, 'pem', 'own.key.pem')], trusted: [join(dir, 'pem', 'scanner.pub.pem')] },
        stores: [{ id: 'obj:main', directory: join(dir, 'objects') }, { id: 'repo:central', url: nginx.url, listCacheMs: 0 }],
        policies: join(dir, 'policies.yaml'),
        buildUriBase: 'https://scans.example.com/s/',
        repositoryAccess: { 'team-a': ['registry.example.com/team-a'] },
      };
      // The same configuration for the CLI (`attestation put`).
      configFile = join(dir, 'buildscope.yaml');
      writeFileSync(configFile, JSON.stringify({ provenance }));
      return provenance;
    });
    const ingest = await server.store.ingestNdjson(
      [
        buildLine('build00000001', { values: { 'Git repository': 'https://git.example.com/team/app', 'Git commit id': 'abc123' }, project: 'app' }),
        buildLine('build00000002', { toolVersion: '7.6', values: { 'Git repository': 'https://evil.example.org/fork' }, project: 'legacy' }),
        buildLine('build00000003', { toolType: 'jsbuild', toolVersion: '2.3.0', project: 'web' }),
      ].join('\n'),
    );
    expect(ingest.every((r) => r.status === 'stored')).toBe(true);
    publisher = await server.user('publisher', ['publishAttestations', 'accessBuildDataViaApi']);
    evaluator = await server.user('evaluator', ['evaluatePolicies']);
    reader = await server.user('reader', ['readAttestations']);
    teamA = await server.user('team-a-user', ['readAttestations', 'evaluatePolicies', 'publishAttestations'], ['team-a']);
    nobody = await server.user('nobody', []);
    everything = await server.user('everything', ['publishAttestations', 'evaluatePolicies', 'readAttestations']);
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await nginx?.stop();
  });

  const url = (path: string) => `${server.url}${path}`;

  describe('publish', () => {
    it('JSON body, no namespace: signs build-tool and SLSA statements and stores them in every store', async () => {
      const r = await call('POST', url('/packages/oci/app/1.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A, buildScan: { ids: ['build00000001'] } } });
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/^application\/json/);
      expect(r.body).toHaveLength(4);
      for (const rec of r.body) {
        expect(rec.status).toBe('SUCCESS');
        expect(['obj:main', 'repo:central']).toContain(rec.details.store);
        expect(rec.details.attestationUri).toBe(`/packages/oci/app/1.0/sha256:${SHA_A}/attestations/${rec.details.store}/${rec.details.id}`);
        expect(rec.details.buildId).toBe('build00000001');
        const file = `oci/_/app/1.0/sha256/${SHA_A}/${rec.details.id}.json`;
        expect(rec.details.location).toBe(rec.details.store === 'obj:main' ? file : `${nginx.url}/${file}`);
      }
      expect(new Set(r.body.map((x: any) => x.details.predicateType))).toEqual(new Set([BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1]));
      published = r.body;
      // Really in nginx's document root and in the object store directory, in the documented layout.
      const layout = join('oci', '_', 'app', '1.0', 'sha256', SHA_A);
      expect(readdirSync(join(nginx.root, '..', 'repo', 'attestations', layout)).filter((f) => f.endsWith('.json'))).toHaveLength(2);
      expect(readdirSync(join(server.dir, 'objects', layout))).toHaveLength(2);
    });

    it("lists the attestations made from a build on the build's page (its details), and no others", async () => {
      expect(published).toHaveLength(4);
      const r = await call('GET', url('/api/builds/build00000001/details'), { auth: publisher.bearer });
      expect(r.status).toBe(200);
      const listed = r.body.attestations as { attestationUri: string; packageUrl: string; digest: string; predicateType: string; store: string; publishedAt: number }[];
      expect(listed.map((a) => a.attestationUri).sort()).toEqual(published.map((p: any) => p.details.attestationUri).sort());
      for (const a of listed) {
        expect(a.packageUrl).toBe(`pkg:oci/app@sha256:${SHA_A}?repository_url=${encodeURIComponent(REPO_A)}&tag=1.0`);
        expect(a.digest).toBe(`sha256:${SHA_A}`);
        expect([BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1]).toContain(a.predicateType);
        expect(['obj:main', 'repo:central']).toContain(a.store);
      }
      // The link on the page fetches the attestation itself.
      const fetched = await call('GET', url(listed[0]!.attestationUri), { auth: everything.basic });
      expect(fetched.status).toBe(200);
      const other = await call('GET', url('/api/builds/build00000003/details'), { auth: publisher.bearer });
      expect(other.body.attestations).toEqual([]);
    });

    it('form-urlencoded with namespace, repeated buildScan.ids and buildScan.queries', async () => {
      const r = await call('POST', url('/packages/jvmpkg/com.acme/lib/2.0/attestations'), {
        auth: publisher.bearer,
        form: { sha256: SHA_B, repositoryUrl: REPO_B, 'buildScan.ids': ['build00000002', 'build00000002'], 'buildScan.queries': ['project:legacy'] },
      });
      expect(r.status).toBe(200);
      // b2 named twice and matched by the query: attested once, in both stores.
      expect(r.body).toHaveLength(4);
      expect(r.body[0].details.attestationUri).toMatch(new RegExp(`^/packages/jvmpkg/com.acme/lib/2.0/sha256:${SHA_B}/attestations/`));
    });

    it('multipart/form-data with several ids, answered as NDJSON lines', async () => {
      const r = await call('POST', url('/packages/oci/web/3.1/attestations'), {
        auth: publisher.basic,
        multipart: { sha256: SHA_C, repositoryUrl: REPO_A, 'buildScan.ids': ['build00000003', 'build00000001'] },
        accept: 'application/x-ndjson',
      });
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/^application\/x-ndjson/);
      expect(r.body).toHaveLength(8);
      expect(r.text.endsWith('\n')).toBe(true);
      for (const rec of r.body) expect(rec.status).toBe('SUCCESS');
    });

    it('a build query selects builds in the advanced search syntax', async () => {
      const r = await call('POST', url('/packages/oci/web/3.2/attestations'), { auth: publisher.basic, json: { sha256: SHA_C, repositoryUrl: REPO_A, buildScan: { queries: ['buildTool:jsbuild'] } } });
      expect(r.status).toBe(200);
      expect(new Set(r.body.map((x: any) => x.details.buildId))).toEqual(new Set(['build00000003']));
    });

    it('400 for bad criteria in all three encodings, unknown builds and bad queries', async () => {
      for (const body of [{ sha256: 'xyz', repositoryUrl: REPO_A }, { sha256: SHA_A }, { sha256: SHA_A, repositoryUrl: 'not a url' }]) {
        for (const enc of ['json', 'form', 'multipart'] as const) {
          const r = await call('POST', url('/packages/oci/app/1.0/attestations'), { auth: publisher.basic, [enc]: body });
          expect(r.status, `${enc} ${JSON.stringify(body)}`).toBe(400);
          expect(r.type).toMatch(/^application\/problem\+json/);
          expect(r.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail: DETAIL_400 });
        }
      }
      const unknown = await call('POST', url('/packages/oci/app/1.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A, buildScan: { ids: ['nope'] } } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail).toContain('nope');
      const badQuery = await call('POST', url('/packages/oci/app/1.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A, buildScan: { queries: ['buildTool:'] } } });
      expect(badQuery.status).toBe(400);
      expect(badQuery.body.detail).toMatch(/^Invalid request content\./);
      // Path segments that could escape the store layout, and the reserved namespace `_`.
      for (const path of ['/packages/oci/..%2F..%2Fetc/app/1.0/attestations', '/packages/oci/_/app/1.0/attestations', '/packages/oci/app/..%2F..%2Fx/attestations', '/packages/Bad%20Type/app/1.0/attestations']) {
        const r = await call('POST', url(path), { auth: publisher.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A, buildScan: { ids: ['build00000001'] } } });
        expect(r.status, path).toBe(400);
        expect(r.body.detail).toBe(DETAIL_400);
      }
      const notJson = await fetch(url('/packages/oci/app/1.0/attestations'), { method: 'POST', headers: { authorization: publisher.basic, 'content-type': 'application/json' }, body: '{"sha256":' });
      expect(notJson.status).toBe(400);
      expect(((await notJson.json()) as any).detail).toBe(DETAIL_400);
    });

    it('401 without credentials, with wrong ones or without the permission; 403 outside the repository scope', async () => {
      for (const auth of [undefined, 'Basic ' + Buffer.from('publisher:wrong').toString('base64'), nobody.bearer, evaluator.basic]) {
        const r = await call('POST', url('/packages/oci/app/1.0/attestations'), { ...(auth ? { auth } : {}), json: { sha256: SHA_A, repositoryUrl: REPO_A } });
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: DETAIL_401 });
        // The challenge of every face of the server (Basic credentials are sent without one, as the seed's samples do).
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="buildscope"/);
      }
      const r = await call('POST', url('/packages/jvmpkg/com.acme/lib/2.0/attestations'), { auth: teamA.basic, json: { sha256: SHA_B, repositoryUrl: REPO_B } });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: DETAIL_403 });
    });
  });

  describe('fetch', () => {
    it('returns the stored envelope from either store, in both path forms, verifiable with /provenance/keys', async () => {
      const keys = await call('GET', url('/provenance/keys'));
      expect(keys.status).toBe(200);
      expect(keys.body.activeKeyId).toBe(ownKey.keyid);
      const served = keys.body.keys.map((k: any) => publicKeyFromPem(k.publicKey, 'served'));
      expect(served.map((k: any) => k.keyid)).toEqual(keys.body.keys.map((k: any) => k.keyid));
      expect(keys.body.keys.map((k: any) => k.keyid)).toContain(scannerKey.keyid);
      for (const rec of published) {
        const r = await call('GET', url(rec.details.attestationUri), { auth: reader.basic });
        expect(r.status).toBe(200);
        expect(r.type).toMatch(/^application\/json/);
        expect(r.body.payloadType).toBe(IN_TOTO_PAYLOAD_TYPE);
        expect(r.body.signatures[0].keyid).toBe(ownKey.keyid);
        const v = verifyAttestation(r.body, served);
        expect(v.ok).toBe(true);
        if (!v.ok) continue;
        expect(v.statement._type).toBe(STATEMENT_V1);
        expect(v.statement.subject).toEqual([{ name: `pkg:oci/app@sha256:${SHA_A}?repository_url=${encodeURIComponent(REPO_A)}&tag=1.0`, digest: { sha256: SHA_A } }]);
        if (v.statement.predicateType === BUILD_TOOL_PREDICATE) {
          expect(v.statement.predicate).toEqual({ toolType: 'jvmbuild', toolVersion: '8.10.2', agentVersion: '3.19.2', buildId: 'build00000001', buildUri: 'https://scans.example.com/s/build00000001' });
        } else {
          expect(v.statement.predicate).toMatchObject({
            buildDefinition: { resolvedDependencies: [{ uri: 'https://git.example.com/team/app', digest: { gitCommit: 'abc123' } }] },
            runDetails: { builder: { id: 'https://buildscope.dev/builders/jvmbuild' }, metadata: { invocationId: 'https://scans.example.com/s/build00000001' } },
          });
        }
        const nd = await call('GET', url(rec.details.attestationUri), { auth: reader.bearer, accept: 'application/x-ndjson' });
        expect(nd.type).toMatch(/^application\/x-ndjson/);
        expect(nd.body).toEqual([r.body]);
      }
      const withNs = await call('POST', url('/packages/jvmpkg/com.acme/lib/2.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_B, repositoryUrl: REPO_B, buildScan: { ids: ['build00000002'] } } });
      const r = await call('GET', url(withNs.body[1].details.attestationUri), { auth: reader.basic });
      expect(r.status).toBe(200);
      expect(withNs.body[1].details.attestationUri).toContain('/packages/jvmpkg/com.acme/lib/2.0/sha256:');
    });

    it('400 for a malformed digest or instance identifier, 404 for an unconfigured instance or unknown id', async () => {
      const id = published[0].details.id;
      const cases: [string, number][] = [
        [`/packages/oci/app/1.0/sha256:xyz/attestations/obj:main/${id}`, 400],
        [`/packages/oci/app/1.0/${SHA_A}/attestations/obj:main/${id}`, 400],
        [`/packages/oci/app/1.0/sha256:${SHA_A}/attestations/bucket:main/${id}`, 400],
        [`/packages/oci/app/1.0/sha256:${SHA_A}/attestations/main/${id}`, 400],
        [`/packages/oci/app/1.0/sha256:${SHA_A}/attestations/obj:other/${id}`, 404],
        [`/packages/oci/app/1.0/sha256:${SHA_A}/attestations/obj:main/${'0'.repeat(64)}`, 404],
        [`/packages/oci/app/2.0/sha256:${SHA_A}/attestations/obj:main/${id}`, 404],
        [`/packages/oci/acme/app/1.0/sha256:${SHA_A}/attestations/repo:central/${id}`, 404],
      ];
      for (const [path, status] of cases) {
        const r = await call('GET', url(path), { auth: reader.basic });
        expect(r.status, path).toBe(status);
        expect(r.type).toMatch(/^application\/problem\+json/);
        expect(r.body.detail).toBe(status === 400 ? DETAIL_400 : DETAIL_404_FETCH);
        expect(r.body.title).toBe(status === 400 ? 'Bad Request' : 'Not Found');
      }
    });

    it('401 without read permission; 403 for a principal whose projects do not cover the repository', async () => {
      const path = published[0].details.attestationUri;
      for (const auth of [undefined, publisher.basic, nobody.basic]) {
        const r = await call('GET', url(path), auth ? { auth } : {});
        expect(r.status).toBe(401);
        expect(r.body.detail).toBe(DETAIL_401);
      }
      // Made from build00000001 (project app, which team-a may not see): not hers to read, though
      // its repository is. One made from a team-a build for the same repository is.
      expect((await call('GET', url(path), { auth: teamA.basic })).status).toBe(403);
      expect((await server.store.ingestNdjson(buildLine('build0000000a', { project: 'team-a' })))[0]).toMatchObject({ status: 'stored' });
      const own = await call('POST', url('/packages/oci/team-a-app/1.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_C, repositoryUrl: REPO_A, buildScan: { ids: ['build0000000a'] } } });
      expect(own.status).toBe(200);
      expect((await call('GET', url(own.body[0].details.attestationUri), { auth: teamA.basic })).status).toBe(200);
      const lib = await call('POST', url('/packages/jvmpkg/com.acme/lib/2.0/attestations'), { auth: publisher.basic, json: { sha256: SHA_B, repositoryUrl: REPO_B, buildScan: { ids: ['build00000002'] } } });
      const r = await call('GET', url(lib.body[0].details.attestationUri), { auth: teamA.basic });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: DETAIL_403 });
    });
  });

  describe('evaluate', () => {
    const byPolicy = (results: any[]) => Object.fromEntries(results.map((r) => [r.policyUri, r]));

    it('one result per policy of the scan, every field of the seed', async () => {
      const r = await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { auth: evaluator.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A } });
      expect(r.status).toBe(200);
      expect(r.body).toHaveLength(5);
      for (const x of r.body) {
        expect(Object.keys(x).sort()).toEqual(['attestationUri', 'details', 'labels', 'policyDescription', 'policyRemediation', 'policyUri', 'sourcedFromUri', 'status']);
        expect(x.labels.scan).toBe('release');
      }
      const p = byPolicy(r.body);
      expect(p['/policies/build-tool/approved-build-tools']).toMatchObject({
        status: 'satisfied',
        policyDescription: 'Builds use an approved build tool version.',
        policyRemediation: '',
        sourcedFromUri: 'https://scans.example.com/s/build00000001',
        details: { buildTool: 'jvmbuild 8.10.2' },
      });
      expect(p['/policies/build-tool/approved-build-tools'].attestationUri).toMatch(new RegExp(`^/packages/oci/app/1.0/sha256:${SHA_A}/attestations/(obj:main|repo:central)/[0-9a-f]{64}$`));
      expect(p['/policies/signing-key/trusted-signers']).toMatchObject({ status: 'satisfied', details: { keyIds: [ownKey.keyid] } });
      expect(p['/policies/predicate-type/provenance-present'].status).toBe('satisfied');
      expect(p['/policies/vulnerability/no-high-vulnerabilities']).toMatchObject({
        status: 'not-applicable',
        attestationUri: null,
        sourcedFromUri: null,
        policyRemediation: 'Upgrade the vulnerable package.',
      });
      expect(p['/policies/vulnerability/no-high-vulnerabilities'].details.message).toContain(VULNS_PREDICATE);
      expect(p['/policies/source-uri/approved-sources']).toMatchObject({ status: 'satisfied', details: { uris: ['https://git.example.com/team/app', REPO_A] } });
    });

    it('unsatisfied policies name what violated them (namespace path form, form body)', async () => {
      const r = await call('POST', url('/packages/jvmpkg/com.acme/lib/2.0/policy-scans/release'), { auth: evaluator.basic, form: { sha256: SHA_B, repositoryUrl: REPO_B } });
      expect(r.status).toBe(200);
      const p = byPolicy(r.body);
      expect(p['/policies/build-tool/approved-build-tools']).toMatchObject({ status: 'unsatisfied', policyRemediation: 'Build with jvmbuild 8.x or jsbuild 2.0 or later.', details: { buildTool: 'jvmbuild 7.6' } });
      expect(p['/policies/source-uri/approved-sources']).toMatchObject({ status: 'unsatisfied', details: { uris: ['https://evil.example.org/fork'] } });
    });

    it('a package without attestations: required predicates unsatisfied, the others not applicable (multipart body)', async () => {
      const r = await call('POST', url('/packages/oci/none/1.0/policy-scans/release'), { auth: evaluator.basic, multipart: { sha256: 'd'.repeat(64), repositoryUrl: REPO_A } });
      expect(r.status).toBe(200);
      const p = byPolicy(r.body);
      expect(p['/policies/predicate-type/provenance-present']).toMatchObject({ status: 'unsatisfied', details: { predicateTypes: [SLSA_PROVENANCE_V1, BUILD_TOOL_PREDICATE] } });
      for (const k of ['/policies/build-tool/approved-build-tools', '/policies/vulnerability/no-high-vulnerabilities', '/policies/source-uri/approved-sources', '/policies/signing-key/trusted-signers']) {
        expect(p[k].status).toBe('not-applicable');
        expect(typeof p[k].details.message).toBe('string');
      }
    });

    it('NDJSON: one line per policy', async () => {
      const r = await call('POST', url('/packages/oci/app/1.0/policy-scans/tools-only'), { auth: evaluator.bearer, json: { sha256: SHA_A, repositoryUrl: REPO_A }, accept: 'application/x-ndjson' });
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/^application\/x-ndjson/);
      expect(r.text.trim().split('\n')).toHaveLength(1);
      expect(r.body[0].policyUri).toBe('/policies/build-tool/approved-build-tools');
    });

    it('404 naming an unknown scan, 400 for bad criteria in three encodings, 401 and 403', async () => {
      const unknown = await call('POST', url('/packages/oci/app/1.0/policy-scans/nightly'), { auth: evaluator.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A } });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ type: 'about:blank', title: 'Not Found', status: 404 });
      expect(unknown.body.detail).toContain("'nightly'");
      for (const body of [{ sha256: SHA_A.slice(1), repositoryUrl: REPO_A }, { repositoryUrl: REPO_A }, { sha256: SHA_A, repositoryUrl: '' }, { sha256: [SHA_A, SHA_B], repositoryUrl: REPO_A }]) {
        for (const enc of ['json', 'form', 'multipart'] as const) {
          const r = await call('POST', url('/packages/oci/acme/app/1.0/policy-scans/release'), { auth: evaluator.basic, [enc]: body });
          expect(r.status, `${enc} ${JSON.stringify(body)}`).toBe(400);
          expect(r.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail: DETAIL_400 });
        }
      }
      for (const auth of [undefined, reader.basic, 'Bearer nonsense']) {
        const r = await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { ...(auth ? { auth } : {}), json: { sha256: SHA_A, repositoryUrl: REPO_A } });
        expect(r.status).toBe(401);
        expect(r.body.detail).toBe(DETAIL_401);
      }
      const forbidden = await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { auth: teamA.basic, json: { sha256: SHA_A, repositoryUrl: 'registry.example.com/team-b/app' } });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.detail).toBe(DETAIL_403);
      expect((await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { auth: teamA.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A } })).status).toBe(200);
    });

    it('counts only verified attestations about this digest: tampered, foreign-key and wrong-subject envelopes are skipped, a trusted scanner put with `attestation put` counts', async () => {
      const folder = join(server.dir, 'objects', 'oci', '_', 'app', '1.0', 'sha256', SHA_A);
      const ours = JSON.parse(readFileSync(join(folder, readdirSync(folder)[0]!), 'utf8'));
      // Tampered: the payload claims another tool version; the signature no longer matches.
      const statement = JSON.parse(Buffer.from(ours.payload, 'base64').toString());
      const tamperedStatement = { ...statement, predicateType: BUILD_TOOL_PREDICATE, predicate: { ...statement.predicate, toolType: 'jvmbuild', toolVersion: '1.0' } };
      writeFileSync(join(folder, 'tampered.json'), JSON.stringify({ ...ours, payload: Buffer.from(JSON.stringify(tamperedStatement)).toString('base64') }));
      // Signed by a key nobody trusts, claiming an old tool.
      const stranger = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(tamperedStatement)), strangerKey);
      writeFileSync(join(folder, 'stranger.json'), JSON.stringify(stranger));
      // Properly signed by our key, but about another artifact.
      const other = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify({ ...tamperedStatement, subject: [{ name: 'x', digest: { sha256: SHA_B } }] })), ownKey);
      writeFileSync(join(folder, 'other-subject.json'), JSON.stringify(other));
      // Not JSON at all.
      writeFileSync(join(folder, 'garbage.json'), 'not json');

      let r = await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { auth: evaluator.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A } });
      expect(r.status).toBe(200);
      let p = byPolicy(r.body);
      expect(p['/policies/build-tool/approved-build-tools']).toMatchObject({ status: 'satisfied', details: { buildTool: 'jvmbuild 8.10.2' } });
      expect(p['/policies/signing-key/trusted-signers']).toMatchObject({ status: 'satisfied', details: { keyIds: [ownKey.keyid] } });

      // A vulnerability scanner's attestation, signed with its (trusted) P-256 key, put beside ours by the CLI.
      const vulns = {
        _type: STATEMENT_V1,
        subject: [{ name: 'pkg:oci/app', digest: { sha256: SHA_A } }],
        predicateType: VULNS_PREDICATE,
        predicate: {
          scanner: {
            uri: 'pkg:github/aquasecurity/trivy@0.50.0',
            version: '0.50.0',
            db: { lastUpdate: '2026-11-20T00:00:00Z' },
            result: [
              { id: 'CVE-2026-0001', severity: [{ method: 'nvd', score: 'low' }], annotations: [{ package: 'pkg:npm/left-pad@1.0.0' }] },
              { id: 'CVE-2026-0002', severity: [{ method: 'cvss_score', score: '9.8' }], annotations: [{ package: 'pkg:maven/org.example/log@2.14.0' }] },
            ],
          },
          metadata: { scanStartedOn: '2026-11-21T00:00:00Z', scanFinishedOn: '2026-11-21T00:01:00Z' },
        },
      };
      const envFile = join(server.dir, 'scan.dsse.json');
      writeFileSync(envFile, JSON.stringify(signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(vulns)), scannerKey)));
      const put = spawnSync(process.execPath, [...CLI, 'attestation', 'put', envFile, '--type', 'oci', '--name', 'app', '--package-version', '1.0', '--store', 'repo:central', '--config', configFile, '--data', server.dir], { encoding: 'utf8', cwd: process.cwd() });
      expect(put.stderr).toBe('');
      expect(put.status).toBe(0);
      expect(put.stdout.trim()).toMatch(new RegExp(`^/packages/oci/app/1.0/sha256:${SHA_A}/attestations/repo:central/[0-9a-f]{64}$`));

      r = await call('POST', url('/packages/oci/app/1.0/policy-scans/release'), { auth: evaluator.basic, json: { sha256: SHA_A, repositoryUrl: REPO_A } });
      p = byPolicy(r.body);
      expect(p['/policies/vulnerability/no-high-vulnerabilities']).toMatchObject({
        status: 'unsatisfied',
        attestationUri: put.stdout.trim(),
        sourcedFromUri: 'pkg:github/aquasecurity/trivy@0.50.0',
        policyRemediation: 'Upgrade the vulnerable package.',
        details: { vulnerablePackage: 'pkg:maven/org.example/log@2.14.0', predicateType: VULNS_PREDICATE },
      });
      expect(p['/policies/signing-key/trusted-signers']).toMatchObject({ status: 'satisfied' });
      expect(new Set(p['/policies/signing-key/trusted-signers'].details.keyIds)).toEqual(new Set([ownKey.keyid, scannerKey.keyid]));
      // The scanner's envelope is fetchable like ours.
      const f = await call('GET', url(put.stdout.trim()), { auth: reader.basic });
      expect(f.status).toBe(200);
      expect(f.body.signatures[0].keyid).toBe(scannerKey.keyid);
    });
  });
});
