// Project isolation through every path that exists, the web app's searches included: a user
// restricted to project `billing`, with every permission, against the builds of project
// `payments` (and one without a project), on SQLite and PostgreSQL. For each path: nothing of an
// invisible build is read (no ID she did not send, no header, value, tag or host of it), nothing
// is changed (the store and the owner's policy results are the same before and after), and
// nothing is revealed (the answer for an invisible build is the answer for an ID that does not
// exist).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBesServer } from '../../src/bes/server.js';
import { createLogger } from '../../src/log.js';
import { besClient, recorded, stream, withInvocation } from '../agents/bes-client.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { provenancePlugin } from '../../src/http/provenance-plugin.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { bearer, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

const P_DONE = 'pay0000000001';
const P_OPEN = 'pay0000000002';
const P_NONE = 'non0000000003';
const B_DONE = 'bil0000000004';
const UNKNOWN = 'zzz0000000009';
const SECRET_IDS = [P_DONE, P_OPEN, P_NONE];
/** Things only the invisible builds hold. */
const MARKERS = ['s3cr3t-value', 'secret-tag', 'payments-ci.internal', '6.6.6-p'];

const SHA_P = 'a1'.repeat(32);
const SHA_UNKNOWN = 'b2'.repeat(32);
const REPO_P = 'registry.example.com/payments/app';
const REPO_B = 'registry.example.com/billing/app';
const PKG = '/packages/oci/payments-app/1.0';

const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: BuildToolPolicy
metadata: { name: approved-tools, labels: { scan: release } }
spec:
  description: Approved build tools.
  remediation: Use native 8.
  tools: [{ type: native, versions: ['8.*'] }]
---
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: provenance-present, labels: { scan: release } }
spec:
  description: Provenance exists.
  remediation: Publish it.
  predicateTypes: ['https://slsa.dev/provenance/v1', 'https://buildscope.dev/attestation/build-tool/v1']
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: release }
spec: { selector: { matchLabels: { scan: release } } }
`;

/** A build; a secret one (the default) carries every marker: host name, tool version, a named value and a tag. */
function line(id: string, o: { project?: string; finished?: boolean; secret?: boolean; toolVersion?: string }): string {
  const secret = o.secret !== false;
  return buildLine({
    id,
    hostname: secret ? 'payments-ci.internal' : 'billing-ci.example.com',
    toolVersion: o.toolVersion ?? (secret ? '6.6.6-p' : '8.10.2'),
    ...(o.project !== undefined ? { project: o.project } : {}),
    ...(secret ? { values: { token: 's3cr3t-value' }, tags: ['secret-tag'] } : {}),
    ...(o.finished !== undefined ? { finished: o.finished } : {}),
  });
}

/** Asserts that a response text holds nothing of the invisible builds except IDs the caller sent. */
function expectNothingOf(text: string, sent: readonly string[] = []): void {
  for (const m of MARKERS) expect(text, `leaks ${m}`).not.toContain(m);
  for (const id of SECRET_IDS) if (!sent.includes(id)) expect(text, `leaks ${id}`).not.toContain(id);
}

const swap = (text: string, id: string) => text.split(id).join('<id>');

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`project isolation on ${dialect}`, () => {
    let s: TestServer;
    let dir: string;
    let admin: string;
    let owner: string;
    let mallory: string;
    let ownerEvaluation: string;
    let snapshot: string;
    const attestation: Record<string, string> = {};

    const get = async (path: string, auth: string) => {
      const r = await fetch(s.url + path, { headers: { authorization: auth } });
      return { status: r.status, text: await r.text() };
    };
    const post = async (path: string, auth: string, json: unknown) => {
      const r = await fetch(s.url + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      return { status: r.status, text: await r.text() };
    };
    /** Everything stored, as an unrestricted reader sees it. */
    const state = async () => {
      const builds = await get('/api/builds?since=0&models=attributes&maxBuilds=1000&maxWaitSecs=1', admin);
      const events: unknown[] = [];
      for await (const e of s.store.streamEvents(P_OPEN)) events.push(e);
      return JSON.stringify({ builds: builds.text, open: await s.store.buildState(P_OPEN, SEE_EVERYTHING), events });
    };
    const evaluate = (auth: string, sha: string, repositoryUrl: string) => post(`${PKG}/policy-scans/release`, auth, { sha256: sha, repositoryUrl });

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'bs-isolation-'));
      mkdirSync(join(dir, 'keys'));
      writeFileSync(join(dir, 'policies.yaml'), POLICIES);
      s = await startTestServer(await newLocation(dialect), {
        plugins: [exportPlugin, provenancePlugin],
        raw: {
          export: { heartbeatMs: 200, retryAfterSeconds: 1 },
          provenance: {
            keys: { directory: join(dir, 'keys') },
            stores: [{ id: 'obj:main', directory: join(dir, 'objects') }],
            policies: join(dir, 'policies.yaml'),
            buildUriBase: 'https://scans.example.com/s/',
            repositoryAccess: { billing: ['registry.example.com/billing'], payments: ['registry.example.com/payments'] },
          },
        },
      });
      const all = ['accessBuildDataViaApi', 'publishScan', 'exportData', 'publishAttestations', 'evaluatePolicies', 'readAttestations'] as const;
      admin = bearer(await s.user('admin', all));
      owner = bearer(await s.user('owner', all, { projects: ['payments'] }));
      mallory = bearer(await s.user('mallory', all, { projects: ['billing'] }));
      const stored = await s.store.ingestNdjson(
        [
          line(P_DONE, { project: 'payments' }),
          line(P_OPEN, { project: 'payments', finished: false }),
          line(P_NONE, {}),
          line(B_DONE, { project: 'billing', secret: false }),
        ].join('\n'),
      );
      expect(stored.map((r) => r.status)).toEqual(['stored', 'stored', 'stored', 'stored']);
      // The owner's attestations for his package, and one made from his build for her repository
      // (which she may read, but not the build it describes).
      for (const [name, repositoryUrl] of [['owner', REPO_P], ['crossed', REPO_B]] as const) {
        const r = await post(`${PKG}/attestations`, admin, { sha256: SHA_P, repositoryUrl, buildScan: { ids: [P_DONE] } });
        expect(r.status, r.text).toBe(200);
        attestation[name] = (JSON.parse(r.text) as { details: { attestationUri: string } }[])[0]!.details.attestationUri;
      }
      const before = await evaluate(owner, SHA_P, REPO_P);
      expect(before.status).toBe(200);
      ownerEvaluation = before.text;
      // The owner reads his own results through his visibility: the bad tool is found.
      expect(ownerEvaluation).toContain('6.6.6-p');
      expect(JSON.parse(ownerEvaluation).map((r: { status: string }) => r.status)).toEqual(['unsatisfied', 'satisfied']);
      snapshot = await state();
    }, 120_000);

    afterAll(async () => {
      // Nothing any test below did changed what is stored or what the owner's evaluation says.
      if (s) {
        expect(await state()).toBe(snapshot);
        expect((await evaluate(owner, SHA_P, REPO_P)).text).toBe(ownerEvaluation);
        await s.close();
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it('listing: only her builds, with attributes', async () => {
      const r = await get('/api/builds?since=0&models=attributes&maxBuilds=1000&maxWaitSecs=1', mallory);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text).map((b: { id: string }) => b.id)).toEqual([B_DONE]);
      expectNothingOf(r.text);
      // Starting after an invisible build reads as starting after an unknown one.
      const unknown = await get(`/api/builds?fromBuild=${UNKNOWN}&maxWaitSecs=1`, mallory);
      expect(unknown.status).toBe(400);
      for (const id of SECRET_IDS) {
        const from = await get(`/api/builds?fromBuild=${id}&maxWaitSecs=1`, mallory);
        expect({ status: from.status, text: swap(from.text, id) }).toEqual({ status: 400, text: swap(unknown.text, UNKNOWN) });
      }
    });

    it('search query: terms that only invisible builds match find nothing', async () => {
      for (const q of ['project:payments', 'value:token=s3cr3t-value', 'tag:secret-tag', 'hostname:payments-ci.internal', 'buildToolVersion:6.6.6-p', '-project:billing', 'not project:*']) {
        const r = await get(`/api/builds?reverse=true&models=attributes&query=${encodeURIComponent(q)}`, mallory);
        expect(r.status, q).toBe(200);
        expect(JSON.parse(r.text), q).toEqual([]);
      }
    });

    it('GET by id: an invisible build answers exactly as an unknown ID', async () => {
      const unknown = await get(`/api/builds/${UNKNOWN}?models=attributes`, mallory);
      expect(unknown.status).toBe(404);
      for (const id of SECRET_IDS) {
        const r = await get(`/api/builds/${id}?models=attributes`, mallory);
        expect({ status: r.status, text: swap(r.text, id) }).toEqual({ status: 404, text: swap(unknown.text, UNKNOWN) });
        expectNothingOf(r.text, [id]);
      }
    });

    it("web app searches: count, facets, trends, list pages and values know only her builds; an invisible build's details and events read as unknown", async () => {
      const count = await get('/api/search/count', mallory);
      expect(count.status).toBe(200);
      expect(JSON.parse(count.text)).toEqual({ count: 1 });
      for (const q of ['tag:secret-tag', 'hostname:payments-ci.internal', 'value:token=*', 'buildToolVersion:6.6.6-p']) {
        const c = await get(`/api/search/count?query=${encodeURIComponent(q)}`, mallory);
        expect(JSON.parse(c.text), q).toEqual({ count: 0 });
      }
      for (const path of [
        '/api/search/builds?limit=100',
        '/api/search/facets',
        '/api/trends?from=1748000000000&to=1750000000000',
        '/api/search/values?field=tag',
        '/api/search/values?field=hostname',
        '/api/search/values?field=buildToolVersion',
      ]) {
        const r = await get(path, mallory);
        expect(r.status, path).toBe(200);
        expectNothingOf(r.text);
      }
      for (const suffix of ['details', 'events']) {
        const unknown = await get(`/api/builds/${UNKNOWN}/${suffix}`, mallory);
        expect(unknown.status).toBe(404);
        for (const id of SECRET_IDS) {
          const r = await get(`/api/builds/${id}/${suffix}`, mallory);
          expect({ status: r.status, text: swap(r.text, id) }).toEqual({ status: 404, text: swap(unknown.text, UNKNOWN) });
          expectNothingOf(r.text, [id]);
        }
      }
    });

    it('ingest: no takeover, no change, and every refusal reads as for an unknown ID', async () => {
      const lines = (id: string) => [
        // Complete another project's unfinished build as hers (its header as stored).
        JSON.stringify({
          buildId: id,
          toolType: 'native',
          toolVersion: '6.6.6-p',
          agentVersion: '3.19',
          events: [
            { timestamp: 1_749_000_100_000, type: { majorVersion: 1, minorVersion: 0, eventType: 'ProjectStructure' }, data: { rootProjectName: 'billing' } },
            { timestamp: 1_749_000_100_001, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildFinished' }, data: { outcome: 'succeeded', failures: [] } },
          ],
        }),
        // Re-send a finished build exactly (would be "unchanged"), with another header (would echo it),
        // and with other content (would be "already stored and finished").
        line(id, { project: 'payments' }),
        line(id, { project: 'payments', toolVersion: '9.9' }),
        line(id, { project: 'billing', secret: false }),
      ];
      const answer = async (id: string) => {
        const r = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { authorization: mallory, 'content-type': 'application/x-ndjson' }, body: `${lines(id).join('\n')}\n` });
        return { status: r.status, text: await r.text() };
      };
      const unknown = await answer(UNKNOWN);
      expect(unknown.status).toBe(200);
      expect(JSON.parse(unknown.text)).toMatchObject({ stored: 0, unchanged: 0, rejected: 4 });
      for (const id of SECRET_IDS) {
        const r = await answer(id);
        expect(swap(r.text, id)).toBe(swap(unknown.text, UNKNOWN));
        expectNothingOf(r.text.split('6.6.6-p').join(''), [id]); // her own lines carry 6.6.6-p
        expect(r.text).not.toContain('8.10.2'); // the stored header of none of them is echoed
      }
      // She may not move a new build into another project either, and may start one in hers.
      const own = await fetch(`${s.url}/api/builds`, {
        method: 'POST',
        headers: { authorization: mallory, 'content-type': 'application/x-ndjson' },
        body: `${JSON.stringify({ ...JSON.parse(line(UNKNOWN, { project: 'payments', secret: false })), buildId: undefined })}\n`,
      });
      expect(JSON.parse(await own.text())).toMatchObject({ stored: 0, rejected: 1 });
    });

    for (const v of [1, 2]) {
      it(`export v${v}, builds stream: only her builds; an invisible start build reads as an unknown one`, async () => {
        const since = await get(`/build-export/v${v}/builds/since/0`, mallory);
        expect(since.status).toBe(200);
        expect(since.text).toContain(B_DONE);
        expectNothingOf(since.text);
        const unknown = await get(`/build-export/v${v}/builds/sinceBuild/${UNKNOWN}`, mallory);
        for (const id of SECRET_IDS) {
          const r = await get(`/build-export/v${v}/builds/sinceBuild/${id}`, mallory);
          expect({ status: r.status, text: swap(r.text, id) }).toEqual({ status: unknown.status, text: swap(unknown.text, UNKNOWN) });
        }
      });

      it(`export v${v}, events stream: an invisible build (finished or not) reads as an unknown one`, async () => {
        const unknown = await get(`/build-export/v${v}/build/${UNKNOWN}/events`, mallory);
        expect(unknown.status).toBe(404);
        for (const id of SECRET_IDS) {
          const r = await get(`/build-export/v${v}/build/${id}/events`, mallory);
          expect({ status: r.status, text: swap(r.text, id) }).toEqual({ status: 404, text: swap(unknown.text, UNKNOWN) });
          expectNothingOf(r.text, [id]);
        }
      });
    }

    it('export v2, live stream: builds of other projects stored while she listens never reach her', async () => {
      // Everything before this test left the store as it was; the builds stored here are the admin's.
      expect(await state()).toBe(snapshot);
      const NEW_P = 'pay0000000005';
      const NEW_B = 'bil0000000006';
      const ac = new AbortController();
      const r = await fetch(`${s.url}/build-export/v2/builds/since/now?stream`, { headers: { authorization: mallory }, signal: ac.signal });
      expect(r.status).toBe(200);
      const reader = r.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // The payments build first, then hers: when hers arrives, the other has been passed over.
      const stored = await s.store.ingestNdjson([line(NEW_P, { project: 'payments' }), line(NEW_B, { project: 'billing', secret: false })].join('\n'));
      expect(stored.map((x) => x.status)).toEqual(['stored', 'stored']);
      const deadline = Date.now() + 30_000;
      while (!text.includes(NEW_B) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      ac.abort();
      expect(text).toContain(NEW_B);
      expect(text).not.toContain(NEW_P);
      expectNothingOf(text);
      snapshot = await state();
    });

    it("provenance publish: her builds only, others' builds read as unknown, others' repositories refused", async () => {
      const unknown = await post(`${PKG}/attestations`, mallory, { sha256: SHA_P, repositoryUrl: REPO_B, buildScan: { ids: [UNKNOWN] } });
      expect(unknown.status).toBe(400);
      for (const id of SECRET_IDS) {
        const r = await post(`${PKG}/attestations`, mallory, { sha256: SHA_P, repositoryUrl: REPO_B, buildScan: { ids: [id] } });
        expect({ status: r.status, text: swap(r.text, id) }).toEqual({ status: 400, text: swap(unknown.text, UNKNOWN) });
      }
      const byQuery = await post(`${PKG}/attestations`, mallory, { sha256: SHA_P, repositoryUrl: REPO_B, buildScan: { queries: ['project:payments', 'tag:secret-tag'] } });
      expect(byQuery.status).toBe(200);
      expect(JSON.parse(byQuery.text)).toEqual([]);
      expect((await post(`${PKG}/attestations`, mallory, { sha256: SHA_P, repositoryUrl: REPO_P, buildScan: { ids: [B_DONE] } })).status).toBe(403);
    });

    it("provenance evaluate: she reads nothing of the owner's attestations, and hers do not change his results", async () => {
      expect((await evaluate(mallory, SHA_P, REPO_P)).status).toBe(403);
      // Under her repository, the package's attestations made from his build are not hers: the
      // answer is that for a digest nothing was ever published for.
      const nothing = await evaluate(mallory, SHA_UNKNOWN, REPO_B);
      const before = await evaluate(mallory, SHA_P, REPO_B);
      expect(before.status).toBe(200);
      expect(before.text.split(SHA_P).join('<sha>')).toBe(nothing.text.split(SHA_UNKNOWN).join('<sha>'));
      expectNothingOf(before.text);
      // She publishes provenance for his package name from her approved build, under her repository.
      const hers = await post(`${PKG}/attestations`, mallory, { sha256: SHA_P, repositoryUrl: REPO_B, buildScan: { ids: [B_DONE] } });
      expect(hers.status).toBe(200);
      const after = await evaluate(mallory, SHA_P, REPO_B);
      expect(JSON.parse(after.text).map((r: { status: string }) => r.status)).toEqual(['satisfied', 'satisfied']);
      expectNothingOf(after.text);
      // The owner's results are checked unchanged after all tests (afterAll); and now, once more.
      expect((await evaluate(owner, SHA_P, REPO_P)).text).toBe(ownerEvaluation);
    });

    it('provenance fetch: neither the owner\'s attestation nor one made from his build for her repository', async () => {
      for (const uri of [attestation['owner']!, attestation['crossed']!]) {
        const r = await get(uri, mallory);
        expect(r.status, uri).toBe(403);
        expectNothingOf(r.text);
        expect((await get(uri, owner)).status).toBe(uri === attestation['owner'] ? 200 : 403);
        expect((await get(uri, admin)).status).toBe(200);
      }
    });

    it("Bazel's Build Event Service: her invocations of his project, or of none of hers, are refused and store nothing", async () => {
      const bes = await startBesServer({ ...s.config.bes, host: '127.0.0.1', port: 0, store: s.store, authenticator: s.auth.authenticator, logger: createLogger('test', 'error') });
      const client = besClient(bes.url);
      try {
        // His project by build metadata, and the workspace's own name (a project not hers): the
        // same answer, with Bazel 5's header and Bazel 4's keyword. afterAll checks nothing changed.
        for (const metadata of [{ PROJECT: 'payments' }, { ROLE: 'CI' }] as Record<string, string>[]) {
          for (const auth of [{ header: mallory }, { keyword: `buildscope_access_key=${mallory.slice('Bearer '.length)}` }]) {
            const r = await stream(client, withInvocation(recorded(), randomUUID(), metadata), auth);
            expect(r.error?.code, JSON.stringify(metadata)).toBe(grpc.status.FAILED_PRECONDITION);
            expectNothingOf(r.error?.details ?? '');
          }
        }
        expect(bes.stats()).toEqual({ invocations: 0, bytes: 0 });
      } finally {
        client.close();
        await bes.close();
      }
    });
  });
}
