// Provenance benchmark: publish (attestations signed and stored per second, Ed25519 vs ECDSA P-256)
// and evaluate (req/s and p99 with autocannon) of a 5-policy scan over a package with 20
// attestations, against a baseline route of the same server (GET /provenance/keys).
//
//   node --import tsx bench/provenance.ts [--quick]
//
// Writes bench/results/provenance.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { buildApp } from '../src/http/app.js';
import { provenancePlugin } from '../src/http/provenance-plugin.js';
import { openAuth } from '../src/auth/index.js';
import { createLogger } from '../src/log.js';
import { buildLine } from '../test/provenance/harness.js';

const quick = process.argv.includes('--quick');
const DURATION = quick ? 3 : 10;
const CONNECTIONS = 10;
const PUBLISH_ROUNDS = quick ? 10 : 40;
const SHA = '5'.repeat(64);
const REPO = 'registry.example.com/bench/app';
const logger = createLogger('bench', 'silent');

const POLICIES = `
apiVersion: policy.buildscope.dev/v1
kind: BuildToolPolicy
metadata: { name: tools, labels: { scan: bench } }
spec: { description: approved tools, remediation: upgrade, tools: [{ type: jvmbuild, versions: ['8.*'] }] }
---
apiVersion: policy.buildscope.dev/v1
kind: SigningKeyPolicy
metadata: { name: keys, labels: { scan: bench } }
spec: { description: trusted keys, remediation: re-sign, keyIds: [KEYID] }
---
apiVersion: policy.buildscope.dev/v1
kind: PredicateTypePolicy
metadata: { name: types, labels: { scan: bench } }
spec: { description: provenance present, remediation: publish, predicateTypes: ['https://slsa.dev/provenance/v1'] }
---
apiVersion: policy.buildscope.dev/v1
kind: VulnerabilityPolicy
metadata: { name: vulns, labels: { scan: bench } }
spec: { description: no high vulnerabilities, remediation: upgrade, severity: high }
---
apiVersion: policy.buildscope.dev/v1
kind: SourceUriPolicy
metadata: { name: sources, labels: { scan: bench } }
spec: { description: approved sources, remediation: move, uris: ['https://git.example.com', '${REPO}'] }
---
apiVersion: policy.buildscope.dev/v1
kind: PolicyScan
metadata: { name: bench }
spec: { selector: { matchLabels: { scan: bench } } }
`;

async function server(algorithm: 'ed25519' | 'ecdsa-p256') {
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-prov-'));
  mkdirSync(join(dir, 'keys'));
  const policies = join(dir, 'policies.yaml');
  const provenance = { keys: { algorithm, directory: join(dir, 'keys') }, stores: [{ id: 'obj:main', directory: join(dir, 'objects') }], policies };
  // The policy file names the key: create the key first by loading the key ring.
  const { loadKeyRing } = await import('../src/provenance/keys.js');
  const ring = loadKeyRing({ algorithm, directory: join(dir, 'keys'), files: [], trusted: [] });
  writeFileSync(policies, POLICIES.replace('KEYID', ring.active.keyid));
  const config = parseConfig({ provenance }, { data: dir });
  const database = await openDatabase(config.database);
  const store = await openBuildStore(database, { logger });
  const app = await buildApp({ config, database, store, logger }, { plugins: [provenancePlugin] });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const auth = await openAuth(database, config);
  await auth.users.addUser({ name: 'bench', password: 'pw-bench', permissions: ['publishAttestations', 'evaluatePolicies', 'readAttestations'], projects: null });
  const { key } = await auth.users.createAccessKey('bench', { expiresAt: Date.now() + 86_400_000 });
  const ids = Array.from({ length: 10 }, (_, i) => `bench${String(i).padStart(8, '0')}`);
  await store.ingestNdjson(ids.map((id) => buildLine(id, { values: { 'Git repository': 'https://git.example.com/bench/app' } })).join('\n'));
  return {
    app,
    url,
    ids,
    authorization: `Bearer ${key}`,
    async close() {
      await app.close();
      await store.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Publishes 10 builds (20 attestations) per request, `rounds` times, to distinct package versions. */
async function publish(s: Awaited<ReturnType<typeof server>>, rounds: number): Promise<{ attestationsPerSec: number; msPerRequest: number }> {
  let attestations = 0;
  const once = (version: string) =>
    fetch(`${s.url}/packages/oci/app/${version}/attestations`, {
      method: 'POST',
      headers: { authorization: s.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: SHA, repositoryUrl: REPO, buildScan: { ids: s.ids } }),
    }).then((r) => r.arrayBuffer());
  // Warm-up (JIT, first module loads), not counted.
  for (let i = 0; i < 10; i++) await once(`warm-${i}`);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) {
    const res = await fetch(`${s.url}/packages/oci/app/${i}/attestations`, {
      method: 'POST',
      headers: { authorization: s.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: SHA, repositoryUrl: REPO, buildScan: { ids: s.ids } }),
    });
    const body = (await res.json()) as unknown[];
    if (res.status !== 200) throw new Error(`publish answered ${res.status}: ${JSON.stringify(body)}`);
    attestations += body.length;
  }
  const ms = performance.now() - t0;
  return { attestationsPerSec: (attestations / ms) * 1000, msPerRequest: ms / rounds };
}

/** CPU milliseconds per request, in-process (fastify inject: no sockets, no load generator). */
async function cpuPerRequest(app: FastifyInstance, options: InjectOptions, n: number): Promise<number> {
  for (let i = 0; i < n / 4; i++) await app.inject(options);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await app.inject(options);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / n;
}

async function cannon(options: autocannon.Options): Promise<{ rps: number; p99: number; p50: number; non2xx: number }> {
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...options });
  return { rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50, non2xx: r.non2xx + r.errors };
}

const ed = await server('ed25519');
const ec = await server('ecdsa-p256');
try {
  const pubEd = await publish(ed, PUBLISH_ROUNDS);
  const pubEc = await publish(ec, PUBLISH_ROUNDS);
  // The evaluated package: version 0, which now has 20 attestations.
  const evalBody = JSON.stringify({ sha256: SHA, repositoryUrl: REPO });
  const check = await fetch(`${ed.url}/packages/oci/app/0/policy-scans/bench`, { method: 'POST', headers: { authorization: ed.authorization, 'content-type': 'application/json' }, body: evalBody });
  const results = (await check.json()) as { status: string }[];
  if (results.length !== 5) throw new Error(`expected 5 results, got ${JSON.stringify(results)}`);
  const evaluate = await cannon({
    url: `${ed.url}/packages/oci/app/0/policy-scans/bench`,
    method: 'POST',
    headers: { authorization: ed.authorization, 'content-type': 'application/json' },
    body: evalBody,
  });
  const cpuEvaluate = await cpuPerRequest(ed.app, { method: 'POST', url: '/packages/oci/app/0/policy-scans/bench', headers: { authorization: ed.authorization, 'content-type': 'application/json' }, payload: evalBody }, quick ? 1000 : 4000);
  const cpuBaseline = await cpuPerRequest(ed.app, { method: 'GET', url: '/provenance/keys', headers: { authorization: ed.authorization } }, quick ? 1000 : 4000);
  const baseline = await cannon({ url: `${ed.url}/provenance/keys`, headers: { authorization: ed.authorization } });
  const rows = [
    { benchmark: 'publish, Ed25519 (attestations signed+stored/s)', value: pubEd.attestationsPerSec.toFixed(0), note: `${pubEd.msPerRequest.toFixed(1)} ms per request of 20` },
    { benchmark: 'publish, ECDSA P-256 (attestations signed+stored/s)', value: pubEc.attestationsPerSec.toFixed(0), note: `Ed25519 / P-256 = ${(pubEd.attestationsPerSec / pubEc.attestationsPerSec).toFixed(2)}x` },
    { benchmark: 'evaluate 5 policies x 20 attestations (req/s)', value: evaluate.rps.toFixed(0), note: `p50 ${evaluate.p50} ms, p99 ${evaluate.p99} ms, non-2xx ${evaluate.non2xx}` },
    { benchmark: 'baseline GET /provenance/keys, same credentials (req/s)', value: baseline.rps.toFixed(0), note: `p99 ${baseline.p99} ms; evaluate / baseline = ${(evaluate.rps / baseline.rps).toFixed(2)}x` },
    { benchmark: 'CPU per evaluation, in-process (ms)', value: cpuEvaluate.toFixed(2), note: `one core: ~${(1000 / cpuEvaluate).toFixed(0)} evaluations/s` },
    { benchmark: 'CPU per baseline request, in-process (ms)', value: cpuBaseline.toFixed(2), note: `evaluate / baseline CPU = ${(cpuEvaluate / cpuBaseline).toFixed(2)}x` },
  ];
  console.table(rows);
  const goals = { evaluationsPerSec: evaluate.rps >= 1000, p99Under50ms: evaluate.p99 < 50 };
  console.log(`goals: >= 1000 evaluations/s: ${goals.evaluationsPerSec ? 'met' : 'NOT met'}; p99 < 50 ms: ${goals.p99Under50ms ? 'met' : 'NOT met'}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/provenance.json',
    `${JSON.stringify({ date: new Date().toISOString(), quick, durationSecs: DURATION, connections: CONNECTIONS, publish: { ed25519: pubEd, p256: pubEc }, evaluate, baseline, cpuMsPerRequest: { evaluate: cpuEvaluate, baseline: cpuBaseline }, goals }, null, 2)}\n`,
  );
} finally {
  await ed.close();
  await ec.close();
}
