// The server the OpenAPI fuzz suite runs against: every face of the document (REST, export,
// provenance, cache node registry) over SQLite or PostgreSQL, small body limits (so that
// oversized bodies are cheap to send) and a 1 s long-poll cap (so that a listing that finds
// nothing does not hold a run).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { provenancePlugin } from '../../src/http/provenance-plugin.js';
import { cacheRegistryPlugin } from '../../src/http/cache-registry-plugin.js';
import { basic, bearer, newLocation, startTestServer, type Dialect, type TestServer } from '../support/server.js';
import { buildId, buildLine } from '../support/lines.js';

export const BODY_LIMIT = 16 * 1024;

const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: provenance-present, labels: { scan: release } }
spec:
  description: Provenance exists.
  remediation: Publish it.
  predicateTypes: ['https://slsa.dev/provenance/v1']
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: release }
spec: { selector: { matchLabels: { scan: release } } }
`;

export interface FuzzServer {
  readonly server: TestServer;
  /** Authorization header values: every permission, restricted to a project, wrong, none. */
  readonly credentials: readonly (string | undefined)[];
  /** Plausible values per parameter name, so that requests also get past the first check. */
  readonly plausible: Readonly<Record<string, readonly string[]>>;
  close(): Promise<void>;
}

export async function startFuzzServer(dialect: Dialect): Promise<FuzzServer> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-fuzz-'));
  mkdirSync(join(dir, 'keys'));
  writeFileSync(join(dir, 'policies.yaml'), POLICIES);
  const server = await startTestServer(await newLocation(dialect), {
    plugins: [exportPlugin, provenancePlugin, cacheRegistryPlugin],
    raw: {
      limits: { requestBodyBytes: BODY_LIMIT, ingestBodyBytes: 4 * BODY_LIMIT, maxWaitSecsDefault: 1, maxWaitSecsMax: 1 },
      export: { heartbeatMs: 200, retryAfterSeconds: 1 },
      provenance: {
        keys: { directory: join(dir, 'keys') },
        stores: [{ id: 'obj:main', directory: join(dir, 'objects') }],
        policies: join(dir, 'policies.yaml'),
        buildUriBase: 'https://scans.example.com/s/',
        repositoryAccess: { app: ['registry.example.com/app'] },
      },
      cacheNodes: { offlineAfterSeconds: 60 },
    },
  });
  const all = ['accessBuildDataViaApi', 'publishScan', 'exportData', 'publishAttestations', 'evaluatePolicies', 'readAttestations', 'readCache', 'manageCacheNodes'] as const;
  const admin = await server.user('admin', all, { password: 'admin-pw' });
  const restricted = await server.user('restricted', all, { projects: ['app'] });
  const lines = Array.from({ length: 6 }, (_, i) => buildLine({ id: buildId(i + 1), project: i % 2 ? 'app' : 'lib', outcome: i % 3 ? 'succeeded' : 'failed', tags: ['ci'] }));
  const stored = await server.store.ingestNdjson(lines.join('\n'));
  if (!stored.every((r) => r.status === 'stored')) throw new Error(`fuzz builds not stored: ${JSON.stringify(stored)}`);
  return {
    server,
    credentials: [bearer(admin), basic('admin', 'admin-pw'), bearer(restricted), 'Bearer nope', basic('admin', 'wrong'), undefined],
    plausible: {
      id: [buildId(1), buildId(2)],
      buildId: [buildId(1), buildId(2)],
      date: ['0', 'now', '2025-01-01T00:00:00Z'],
      stream: [''],
      type: ['maven', 'npm', 'oci', 'generic'],
      namespace: ['com.example'],
      name: ['app', 'node-1'],
      version: ['1.0'],
      scan: ['release'],
      digest: ['sha256:' + 'a1'.repeat(32)],
      instance: ['obj:main'],
      eventTypes: ['BuildStarted,BuildFinished'],
      models: ['attributes'],
      query: ['buildOutcome:failed', 'project:app*'],
      maxBuilds: ['1'],
      permissions: ['accessBuildDataViaApi'],
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
