// The Build Event Service endpoint driven by a gRPC client that replays a real Bazel event stream
// (recorded from Debian's Bazel 4.2.3 running the fixture workspace with a failing test, then
// stripped of the client's environment and local paths): acknowledgements by sequence number,
// credentials as a header (Bazel 5+) or keyword (Bazel 4), permissions, messages over 4 MiB, and a
// re-sent stream being the same build. Runs without Bazel.

import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { besClient, recorded, stream, withInvocation, type BesClient } from './bes-client.js';
import { run, startAgentTestServer, type AgentTestServer } from './support.js';
import { CLI } from '../support/compiled-cli.js';

describe('Build Event Service endpoint (replayed Bazel stream)', () => {
  let server: AgentTestServer;
  let client: BesClient;

  beforeAll(async () => {
    server = await startAgentTestServer({ bes: true });
    client = besClient(server.besUrl!);
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  const replay = (events: Parameters<typeof stream>[1], auth: { header?: string; keyword?: string }) => stream(client, events, auth);

  it('acknowledges every event by sequence number and stores the invocation as a failed targetbuild build', async () => {
    const events = recorded();
    const r = await replay(events, { header: `Bearer ${server.accessKey}` });
    expect(r.error).toBeUndefined();
    expect(r.acks).toEqual(Array.from({ length: events.length + 1 }, (_, i) => i + 1));
    const ids = await server.search('buildTool:targetbuild buildOutcome:failed hasVerificationFailure targetbuild.requestedTargets://... tag:CI value:"ROLE=CI"');
    expect(ids).toHaveLength(1);
    const exported = await server.events(ids[0]!);
    expect(exported.filter((e) => e.eventType === 'TaskFinished').map((e) => [e.data['path'], e.data['outcome']])).toEqual([
      ['//:greeting', 'success'],
      ['//:greeting_test', 'failed'],
    ]);
    // Bazel's link (--bes_results_url=<server>/builds/bazel/) leads to the build.
    const uuid = (events.find((e) => e['started'])!['started'] as { uuid: string }).uuid;
    const redirect = await fetch(`${server.url}/builds/bazel/${uuid}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(`/builds/${ids[0]}`);
    const bad = await fetch(`${server.url}/builds/bazel/not-an-invocation`, { redirect: 'manual' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    // Bazel sends the client's environment in its command line events; none of it is stored.
    expect(JSON.stringify(exported)).not.toMatch(/client_env|--override_repository/);
  });

  it('stores a re-sent stream once (the build ID comes from the invocation ID)', async () => {
    const before = await server.search('buildTool:targetbuild');
    const r = await replay(recorded(), { header: `Bearer ${server.accessKey}` });
    expect(r.error).toBeUndefined();
    expect(await server.search('buildTool:targetbuild')).toEqual(before);
  });

  it('accepts the access key as the buildscope_access_key keyword (Bazel 4) and messages larger than 4 MiB', async () => {
    const events = withInvocation(recorded(), '11111111-2222-4333-8444-555555555555');
    // A progress event with 5 MiB of output, as a chatty build produces.
    events.splice(2, 0, { id: { progress: { opaqueCount: 99 } }, progress: { stderr: 'x'.repeat(5 * 1024 * 1024) } });
    const r = await replay(events, { keyword: `buildscope_access_key=${server.accessKey}` });
    expect(r.error).toBeUndefined();
    expect(r.acks).toHaveLength(events.length + 1);
    expect(await server.search('buildTool:targetbuild')).toHaveLength(2);
  });

  it('refuses a stream without credentials, with a wrong key, or without publishScan, and stores nothing', async () => {
    const before = await server.search('buildTool:targetbuild');
    const events = withInvocation(recorded(), '99999999-2222-4333-8444-555555555555');
    const none = await replay(events, {});
    expect(none.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(none.error?.details).toContain('--bes_header=Authorization=Bearer');
    expect(none.acks).toEqual([]);
    const wrong = await replay(events, { header: 'Bearer nope' });
    expect(wrong.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    await server.server.app.ready();
    const { openAuth } = await import('../../src/auth/index.js');
    const auth = await openAuth(server.server.database, (await import('../../src/config.js')).parseConfig({}));
    await auth.users.addUser({ name: 'reader', password: 'reader-password-1', permissions: ['accessBuildDataViaApi'] });
    const { key } = await auth.users.createAccessKey('reader', { expiresAt: Date.now() + 86_400_000 });
    const denied = await replay(events, { header: `Bearer ${key}` });
    expect(denied.error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await server.search('buildTool:targetbuild')).toEqual(before);
  });

  it('answers lifecycle events: without credentials (Bazel 4 cannot send them) and refuses wrong ones', async () => {
    const call = (header?: string) =>
      new Promise<grpc.ServiceError | null>((done) => {
        const metadata = new grpc.Metadata();
        if (header) metadata.set('authorization', header);
        client['PublishLifecycleEvent']!({ buildEvent: { streamId: { buildId: 'x', component: 'CONTROLLER' }, sequenceNumber: '1', event: { buildEnqueued: {} } } }, metadata, (e: grpc.ServiceError | null) => done(e));
      });
    expect(await call()).toBeNull();
    expect(await call(`Bearer ${server.accessKey}`)).toBeNull();
    expect((await call('Bearer nope'))?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('ingest-bep ends with one clear line for a file that is not a Bazel event file', async () => {
    const r = await run(process.execPath, [...CLI, 'ingest-bep', 'package.json', '--data', '/nonexistent-never-created']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^buildscope ingest-bep: line 1: not JSON .*--build_event_json_file/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
