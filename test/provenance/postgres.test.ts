// The provenance face over a PostgreSQL-backed server: builds found by ID and by query come from
// the same store search as everywhere, and evaluation sees what was published.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { buildLine, call, startProvenanceServer, type ProvenanceServer } from './harness.js';

const SHA = '7'.repeat(64);
const REPO = 'https://repo.example.com/maven2';

describe.skipIf(!pgAvailable())('provenance on PostgreSQL', () => {
  let pg: TestDatabase;
  let server: ProvenanceServer;
  let auth: string;

  beforeAll(async () => {
    pg = (await createTestDatabase())!;
    server = await startProvenanceServer(
      (dir) => ({ keys: { directory: join(dir, 'keys') }, stores: [{ id: 'obj:pg', directory: join(dir, 'objects') }], policies: undefined }),
      { url: pg.url },
    );
    await server.store.ingestNdjson([buildLine('pgbuild000001', { project: 'lib' }), buildLine('pgbuild000002', { toolType: 'scalabuild', toolVersion: '1.9.0', project: 'lib' })].join('\n'));
    auth = (await server.user('pg', ['publishAttestations', 'readAttestations'])).bearer;
  });
  afterAll(async () => {
    await server?.close();
    await pg?.drop();
  });

  it('publishes from a query and an id, then fetches in both path forms', async () => {
    const r = await call('POST', `${server.url}/packages/jvmpkg/com.acme/lib/1.0/attestations`, {
      auth,
      form: { sha256: SHA, repositoryUrl: REPO, 'buildScan.queries': 'buildTool:scalabuild', 'buildScan.ids': 'pgbuild000001' },
    });
    expect(r.status).toBe(200);
    expect(new Set(r.body.map((x: any) => x.details.buildId))).toEqual(new Set(['pgbuild000001', 'pgbuild000002']));
    const f = await call('GET', `${server.url}${r.body[0].details.attestationUri}`, { auth });
    expect(f.status).toBe(200);
    expect(f.body.payloadType).toBe('application/vnd.in-toto+json');
    const noNs = await call('POST', `${server.url}/packages/oci/lib/1.0/attestations`, { auth, json: { sha256: SHA, repositoryUrl: REPO, buildScan: { ids: ['pgbuild000002'] } } });
    expect((await call('GET', `${server.url}${noNs.body[0].details.attestationUri}`, { auth })).status).toBe(200);
  });

  it('an evaluate of a scan when no policy file is configured is a 404 naming it', async () => {
    const u = await server.user('ev', ['evaluatePolicies']);
    const r = await call('POST', `${server.url}/packages/oci/lib/1.0/policy-scans/release`, { auth: u.bearer, json: { sha256: SHA, repositoryUrl: REPO } });
    expect(r.status).toBe(404);
    expect(r.body.detail).toBe("No policy scan named 'release' is defined.");
  });
});
