// Client input the provenance face must answer with 400 problem documents, never 500: package
// types whose package URL needs a namespace on the no-namespace paths, and malformed multipart
// bodies on publish and evaluate.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLine, call, startProvenanceServer, type ProvenanceServer } from './harness.js';

const SHA = 'e'.repeat(64);
const REPO = 'registry.example.com/team/lib';
export const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: provenance-present, labels: { scan: release } }
spec:
  description: Build provenance exists.
  remediation: Publish attestations for the package.
  predicateTypes: ['https://slsa.dev/provenance/v1']
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: release }
spec: { selector: { matchLabels: { scan: release } } }
`;
const DETAIL_400 = 'Invalid request content. Bad criteria (sha256 or repositoryUrl).';

describe('provenance input errors', () => {
  let server: ProvenanceServer;
  let auth: string;

  beforeAll(async () => {
    server = await startProvenanceServer((dir) => {
      mkdirSync(join(dir, 'p'), { recursive: true });
      writeFileSync(join(dir, 'p', 'policies.yaml'), POLICIES);
      return { stores: [{ id: 'obj:main', directory: join(dir, 'objects') }], policies: join(dir, 'p', 'policies.yaml') };
    });
    expect((await server.store.ingestNdjson(buildLine('build00000001')))[0]).toMatchObject({ status: 'stored' });
    auth = (await server.user('admin', ['publishAttestations', 'evaluatePolicies', 'readAttestations', 'accessBuildDataViaApi'])).basic;
  });
  afterAll(() => server?.close());

  const expectBadRequest = (r: { status: number; type: string; body: any }, reason: RegExp) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.type).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail: DETAIL_400 });
    expect(r.body.reason).toMatch(reason);
  };

  it('publishing a jvmpkg, maven or swift package without a namespace answers 400 saying the purl needs one', async () => {
    for (const type of ['jvmpkg', 'maven', 'swift']) {
      const r = await call('POST', `${server.url}/packages/${type}/lib/2.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
      expectBadRequest(r, /requires a "namespace"/);
      expect(r.body.reason).toContain(`/packages/${type}/{namespace}/lib/2.0`);
    }
    // With a namespace the same package publishes; a type without that rule publishes without one.
    const withNs = await call('POST', `${server.url}/packages/jvmpkg/com.acme/lib/2.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
    expect(withNs.status).toBe(200);
    const npm = await call('POST', `${server.url}/packages/npm/lib/2.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['build00000001'] } } });
    expect(npm.status).toBe(200);
    expect(npm.body).toHaveLength(2);
  });

  /** A raw multipart request: `contentType` as given, `body` as given. */
  const raw = (path: string, contentType: string, body: string) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': contentType, accept: 'application/json' }, body });

  const B = 'XyZboundary42';
  const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const whole = field('sha256', SHA) + field('repositoryUrl', REPO) + `--${B}--\r\n`;
  const cases: readonly { readonly name: string; readonly type: string; readonly body: string; readonly reason: RegExp }[] = [
    { name: 'no boundary parameter', type: 'multipart/form-data', body: whole, reason: /boundary/i },
    { name: 'no closing boundary', type: `multipart/form-data; boundary=${B}`, body: field('sha256', SHA) + field('repositoryUrl', REPO), reason: /malformed multipart/ },
    { name: 'a part cut short', type: `multipart/form-data; boundary=${B}`, body: field('sha256', SHA) + `--${B}\r\nContent-Disposition: form-data; name="repo`, reason: /malformed multipart/ },
  ];
  for (const path of ['/packages/oci/app/1.0/attestations', '/packages/oci/app/1.0/policy-scans/release']) {
    for (const c of cases) {
      it(`${path.includes('policy') ? 'evaluate' : 'publish'}: ${c.name} answers 400`, async () => {
        const r = await raw(path, c.type, c.body);
        const body = await r.json();
        expectBadRequest({ status: r.status, type: r.headers.get('content-type') ?? '', body }, c.reason);
      });
    }
    it(`${path.includes('policy') ? 'evaluate' : 'publish'}: the well-formed body is accepted`, async () => {
      expect((await raw(path, `multipart/form-data; boundary=${B}`, whole)).status).toBe(200);
    });
  }

  it('another content type answers 415 naming the accepted ones; a JSON body that does not parse is the seed\'s 400 with a reason', async () => {
    const r = await raw('/packages/oci/app/1.0/attestations', 'text/plain', `sha256=${SHA}`);
    expect(r.status).toBe(415);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await r.json()) as { type: string; detail: string };
    expect(body.type).toBe('about:blank');
    expect(body.detail).toContain('application/json, application/x-www-form-urlencoded or multipart/form-data');
    const notJson = await raw('/packages/oci/app/1.0/policy-scans/release', 'application/json', '{"sha256":');
    expectBadRequest({ status: notJson.status, type: notJson.headers.get('content-type') ?? '', body: await notJson.json() }, /^the body is not JSON/);
  });
});
