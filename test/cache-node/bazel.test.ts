// End to end with the real Bazel (Debian's bazel-bootstrap 4.2.3): the fixture workspace of
// test/agents (a genrule and a shell test, offline) is built against one node, over Bazel's HTTP
// cache protocol and over the Remote Execution API's gRPC cache, twice with a `bazel clean` in
// between: the second build's actions come from the remote cache, as Bazel's own summary line
// says. A read-only key gets its hits and writes nothing. One node and one Bazel server (one
// output base) serve every case.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bazelWorkspace, hasBazel, type BazelWorkspace } from '../support/bazel.js';
import { fastHash, startTestNode, type TestNode } from './helpers.js';

/** Bazel 4.2.3's summary, e.g. "INFO: 6 processes: 3 internal, 3 remote cache hit." */
function remoteHits(output: string): number {
  const line = /INFO: \d+ process(?:es)?: [^\n]*/.exec(output)?.[0] ?? '';
  return Number(/(\d+) remote cache hit/.exec(line)?.[1] ?? 0);
}

function summary(output: string): string {
  return /INFO: \d+ process(?:es)?: [^\n]*/.exec(output)?.[0] ?? '(no summary line)';
}

describe.skipIf(!hasBazel)('Bazel against the cache node', () => {
  let t: TestNode;
  let ws: BazelWorkspace;
  const lines: string[] = [];

  const bazel = (args: string[]) => ws.bazel(args);
  const offline = () => ws.offline;
  const hostPort = () => t.node.url.replace(/^http:\/\//, '');
  const grpcUrl = () => t.node.grpcUrl!;
  const basicHeader = (user: string, password: string) => `--remote_header=Authorization=Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  /** `bazel clean`, then `bazel test //...` with the given flags; returns Bazel's output. */
  async function cleanBuild(label: string, flags: string[]): Promise<string> {
    const c = await bazel(['clean']);
    expect(c.status, c.output).toBe(0);
    const r = await bazel(['test', '//...', ...offline(), ...flags]);
    lines.push(`${label}: ${summary(r.output)}`);
    expect(r.status, r.output).toBe(0);
    return r.output;
  }

  beforeAll(async () => {
    ws = bazelWorkspace('bs-bazel-cache-');
    t = await startTestNode({
      version: 4,
      cache: {
        accessControl: {
          anonymousLevel: 'none',
          users: { ci: { level: 'readwrite', password: await fastHash('ci-password') }, dev: { level: 'read', password: await fastHash('dev-password') } },
        },
      },
      uiAccess: { type: 'open' },
    }, { grpcPort: 0 });
  }, 120_000);

  afterAll(async () => {
    await ws?.close();
    await t?.close();
    // The summary lines, for the record of a run.
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  }, 120_000);

  it('over HTTP: the second clean build comes from the remote cache (credentials in the URL)', async () => {
    // A salt in the action environment: actions of this case miss the actions of every other case.
    const salt = [`--action_env=CACHE_CASE=http-${randomBytes(4).toString('hex')}`];
    const cache = [`--remote_cache=http://ci:ci-password@${hostPort()}`];
    const first = await cleanBuild('http, first build', [...cache, ...salt]);
    expect(remoteHits(first)).toBe(0);
    const stored = t.node.status().bazel.http;
    expect(stored.ac.writes).toBeGreaterThan(0);
    expect(stored.cas.writes).toBeGreaterThan(0);
    expect(stored.refused.missingContent).toBe(0);
    const second = await cleanBuild('http, second build', [...cache, ...salt]);
    expect(remoteHits(second)).toBeGreaterThanOrEqual(2);
    expect(second).toMatch(/remote cache hit/);
    expect(t.node.status().bazel.http.ac.hits).toBeGreaterThanOrEqual(2);
  }, 300_000);

  it('over HTTP with a read-only key (--remote_header): hits are served, nothing is written', async () => {
    const salt = `http-ro-${randomBytes(4).toString('hex')}`;
    const header = `--remote_header=Authorization=Basic ${Buffer.from('dev:dev-password').toString('base64')}`;
    // Filled by CI first.
    await cleanBuild('http, ci fills', [`--remote_cache=http://ci:ci-password@${hostPort()}`, `--action_env=CACHE_CASE=${salt}`]);
    const writes = () => t.node.status().bazel.http.ac.writes + t.node.status().bazel.http.cas.writes;
    const before = writes();
    const entries = t.node.store.size;
    const hit = await cleanBuild('http, read-only key, cached', [`--remote_cache=http://${hostPort()}`, header, '--remote_upload_local_results=false', `--action_env=CACHE_CASE=${salt}`]);
    expect(remoteHits(hit)).toBeGreaterThanOrEqual(2);
    // Actions the cache does not hold run locally; the build succeeds and uploads nothing.
    const miss = await cleanBuild('http, read-only key, uncached', [`--remote_cache=http://${hostPort()}`, header, '--remote_upload_local_results=false', `--action_env=CACHE_CASE=${salt}-new`]);
    expect(remoteHits(miss)).toBe(0);
    // Without --remote_upload_local_results=false Bazel tries, is refused (403) and still succeeds.
    const refused = await cleanBuild('http, read-only key, uploads refused', [`--remote_cache=http://dev:dev-password@${hostPort()}`, `--action_env=CACHE_CASE=${salt}-other`]);
    expect(refused).toMatch(/WARNING: Writing to Remote Cache/);
    expect(writes()).toBe(before);
    expect(t.node.store.size).toBe(entries);
  }, 300_000);

  it('over gRPC: the second clean build comes from the remote cache', async () => {
    const salt = [`--action_env=CACHE_CASE=grpc-${randomBytes(4).toString('hex')}`];
    const cache = [`--remote_cache=${grpcUrl()}`, basicHeader('ci', 'ci-password'), '--remote_instance_name=main'];
    const before = t.node.status().bazel.grpc;
    const acWrites = before.ac.writes;
    const first = await cleanBuild('grpc, first build', [...cache, ...salt]);
    expect(remoteHits(first)).toBe(0);
    const after = t.node.status().bazel.grpc;
    expect(after.ac.writes).toBeGreaterThan(acWrites);
    expect(after.cas.writes).toBeGreaterThan(0);
    expect(after.refused.missingContent).toBe(0);
    const second = await cleanBuild('grpc, second build', [...cache, ...salt]);
    expect(remoteHits(second)).toBeGreaterThanOrEqual(2);
    expect(t.node.status().bazel.grpc.ac.hits).toBeGreaterThanOrEqual(2);
    expect(t.node.status().bazel.grpc.cas.hits).toBeGreaterThan(0);
  }, 300_000);

  it('over gRPC with a read-only key: refused at start unless --remote_upload_local_results=false, then hits and no writes', async () => {
    const salt = `grpc-ro-${randomBytes(4).toString('hex')}`;
    await cleanBuild('grpc, ci fills', [`--remote_cache=${grpcUrl()}`, basicHeader('ci', 'ci-password'), `--action_env=CACHE_CASE=${salt}`]);
    const writes = () => t.node.status().bazel.grpc.ac.writes + t.node.status().bazel.grpc.cas.writes;
    const before = writes();
    const entries = t.node.store.size;
    const readOnly = [`--remote_cache=${grpcUrl()}`, basicHeader('dev', 'dev-password')];
    // The capabilities say this key cannot update the action cache; Bazel says why it stops.
    const refused = await bazel(['build', '//...', ...offline(), ...readOnly, `--action_env=CACHE_CASE=${salt}`]);
    expect(refused.status).not.toBe(0);
    expect(refused.output).toMatch(/--remote_upload_local_results is set, but the current account is not authorized/);
    const hit = await cleanBuild('grpc, read-only key, cached', [...readOnly, '--remote_upload_local_results=false', `--action_env=CACHE_CASE=${salt}`]);
    expect(remoteHits(hit)).toBeGreaterThanOrEqual(2);
    const miss = await cleanBuild('grpc, read-only key, uncached', [...readOnly, '--remote_upload_local_results=false', `--action_env=CACHE_CASE=${salt}-new`]);
    expect(remoteHits(miss)).toBe(0);
    expect(writes()).toBe(before);
    expect(t.node.store.size).toBe(entries);
  }, 300_000);
});
