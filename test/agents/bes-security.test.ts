// The Build Event Service endpoint under a publisher who should not get what she asks for: the
// project rules of the ingest (as over REST), credentials checked before messages are read, the
// bounds of what unfinished invocations keep, and hostile streams (bad sequence numbers, IDs and
// protobuf). One server with small limits serves every case; each case uses its own users and
// invocation IDs. Runs without Bazel (a gRPC client replays a recorded stream).

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIdFromInvocation, type BepEvent } from '../../src/bes/bep-build.js';
import type { Permission } from '../../src/auth/types.js';
import { besClient, open, recorded, request, stream, withInvocation, type BesClient } from './bes-client.js';
import { startAgentTestServer, type AgentTestServer } from './support.js';
import { waitFor } from '../support/wait.js';
import { agentContract } from '../../src/agents/contract.js';

describe('Build Event Service endpoint: rules and bounds', () => {
  let server: AgentTestServer;
  let client: BesClient;
  const keys = new Map<string, string>();

  /** An access key of a new user with these permissions and projects. */
  async function keyOf(name: string, permissions: Permission[] = ['publishScan', 'accessBuildDataViaApi'], projects: string[] | null = null): Promise<string> {
    const { openAuth } = await import('../../src/auth/index.js');
    const { parseConfig } = await import('../../src/config.js');
    const auth = await openAuth(server.server.database, parseConfig({}));
    await auth.users.addUser({ name, password: `${name}-password-1`, permissions, projects });
    const { key } = await auth.users.createAccessKey(name, { expiresAt: Date.now() + 86_400_000 });
    keys.set(name, key);
    return key;
  }
  const searchAs = async (name: string, query: string): Promise<string[]> => {
    const r = await fetch(`${server.url}/api/builds?fromInstant=0&maxWaitSecs=1&query=${encodeURIComponent(query)}`, { headers: { authorization: `Bearer ${keys.get(name)}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { id: string }[]).map((b) => b.id);
  };
  const bigTarget = (i: number): BepEvent => ({ id: { targetConfigured: { label: `//big:${i}-${'x'.repeat(16_000)}` } }, configured: { targetKind: 'genrule rule' } });

  beforeAll(async () => {
    server = await startAgentTestServer({
      bes: { maxUnauthenticatedMessageBytes: 64 * 1024, maxInvocationBytes: 4 * 1024 * 1024, maxOpenInvocationsPerUser: 2, retryWindowSeconds: 600 },
    });
    client = besClient(server.besUrl!);
    await Promise.all([
      keyOf('alpha-dev', ['publishScan', 'accessBuildDataViaApi'], ['alpha']),
      keyOf('beta-dev', ['publishScan', 'accessBuildDataViaApi'], ['beta']),
      keyOf('ci-one'),
      keyOf('ci-two'),
      keyOf('ci-three'),
    ]);
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  it("holds a restricted publisher to her projects, as over REST, and says why in the stream's status", async () => {
    const elsewhere = withInvocation(recorded(), randomUUID(), { PROJECT: 'alpha' });
    const refused = await stream(client, elsewhere, { header: `Bearer ${keys.get('beta-dev')}` });
    expect(refused.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(refused.error?.details).toMatch(/not stored.*alpha/);
    expect(await searchAs('alpha-dev', 'buildTool:targetbuild')).toEqual([]);
    expect(await server.search('project:alpha')).toEqual([]);

    // Her own project is stored; the ID is the server's choice (she never names a new build's ID).
    const uuid = randomUUID();
    const own = await stream(client, withInvocation(recorded(), uuid, { PROJECT: 'beta' }), { keyword: `buildscope_access_key=${keys.get('beta-dev')}` });
    expect(own.error).toBeUndefined();
    const ids = await searchAs('beta-dev', 'buildTool:targetbuild project:beta');
    expect(ids).toHaveLength(1);
    expect(ids[0]).not.toBe(buildIdFromInvocation(uuid));
    expect(await searchAs('alpha-dev', 'buildTool:targetbuild')).toEqual([]);
  });

  it('refuses a bad key before reading the message, and an unknown caller any first message over the limit', async () => {
    const large: BepEvent = { id: { progress: { opaqueCount: 1 } }, progress: { stderr: 'x'.repeat(2 * 1024 * 1024) } };
    const events = withInvocation(recorded(), randomUUID());
    events.unshift(large);
    const wrongKey = await stream(client, events, { header: 'Bearer bsk_not_a_key' });
    expect(wrongKey.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(wrongKey.acks).toEqual([]);
    const anonymous = await stream(client, events, {});
    expect(anonymous.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(anonymous.acks).toEqual([]);
    // The same large event is fine once the first message has named the caller (Bazel 4's keyword).
    const [first, ...rest] = withInvocation(recorded(), randomUUID());
    const known = await stream(client, [first!, large, ...rest], { keyword: `buildscope_access_key=${keys.get('ci-one')}` });
    expect(known.error).toBeUndefined();
    expect(known.acks).toHaveLength(rest.length + 3);
    // And a key without publishScan is refused from the metadata too.
    const reader = await keyOf('reader-only', ['accessBuildDataViaApi']);
    expect((await stream(client, events, { header: `Bearer ${reader}` })).error?.code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('limits wrong passwords of Basic credentials by the connection\'s address, as over HTTP', async () => {
    const basic = `Basic ${Buffer.from('ci-three:not-the-password').toString('base64')}`;
    const events = withInvocation(recorded(), randomUUID()).slice(0, 1);
    const details: string[] = [];
    for (let i = 0; i < 7; i++) details.push((await stream(client, events, { header: basic }, randomUUID())).error?.details ?? '');
    expect(details.slice(0, 5).every((d) => d.includes('wrong user name or password'))).toBe(true);
    expect(details[6]).toMatch(/too many failed sign-ins for this user name from this address; retry in \d+ s/);
    // One authentication for both faces: the same limit holds over HTTP (with a limiter of its
    // own, HTTP would answer its 5 free failures with 401; here a try past the wait fails and
    // doubles it, so the next one is refused at the latest).
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await fetch(`${server.url}/api/builds?maxWaitSecs=1`, { headers: { authorization: basic } })).status);
    expect(statuses).toContain(429);
  });

  it('keeps only what the build is made of: large output costs one bounded console, a large invocation is refused and dropped', async () => {
    const before = server.server.besStats!();
    const chatty = withInvocation(recorded(), randomUUID());
    for (let i = 0; i < 8; i++) chatty.splice(2, 0, { id: { progress: { opaqueCount: 10 + i } }, progress: { stdout: 'y'.repeat(3 * 1024 * 1024) } });
    const { call, done } = open(client, `Bearer ${keys.get('ci-one')}`);
    const uuid = (chatty[0]!['started'] as { uuid: string }).uuid;
    chatty.forEach((e, i) => call.write(request(uuid, i + 1, e)));
    // Every event acknowledged, the invocation not finished: what it keeps is small.
    await waitFor(() => server.server.besStats!().invocations === before.invocations + 1 && server.server.besStats!().bytes - before.bytes > 0, 'the invocation among the unfinished ones', 20_000);
    let ended = false;
    void done.then(
      () => (ended = true),
      () => (ended = true),
    );
    await waitFor(() => ended || server.server.besStats!().bytes > 0, 'the call to end or the invocation to hold bytes', 20_000);
    // The console the build shows (the first chunk, cut past the contract's bound), not the 24 MiB sent.
    expect(server.server.besStats!().bytes - before.bytes).toBeLessThan(agentContract().bounds.consoleChars + 64 * 1024);
    call.write(request(uuid, chatty.length + 1, 'finished'));
    call.end();
    expect((await done).error).toBeUndefined();
    expect(server.server.besStats!().invocations).toBe(before.invocations);

    const huge = withInvocation(recorded(), randomUUID());
    for (let i = 0; i < 300; i++) huge.splice(2, 0, bigTarget(i));
    const refused = await stream(client, huge, { header: `Bearer ${keys.get('ci-one')}` });
    expect(refused.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(refused.error?.details).toContain('bes.maxInvocationBytes');
    expect(server.server.besStats!()).toEqual(before);
  });

  it("bounds one user's unfinished invocations, keeps them for Bazel to resume, and lets no other user add to them", async () => {
    const header = `Bearer ${keys.get('ci-two')}`;
    const a = withInvocation(recorded(), randomUUID());
    const b = withInvocation(recorded(), randomUUID());
    const c = withInvocation(recorded(), randomUUID());
    // Two invocations cut short after three events each: kept for the retry window.
    expect((await stream(client, a.slice(0, 3), { header, finish: false })).error).toBeUndefined();
    expect((await stream(client, b.slice(0, 3), { header, finish: false })).error).toBeUndefined();
    const third = await stream(client, c, { header });
    expect(third.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(third.error?.details).toContain('bes.maxOpenInvocationsPerUser');
    // Another user cannot add to them.
    const uuidOf = (events: BepEvent[]): string => (events[0]!['started'] as { uuid: string }).uuid;
    const other = await stream(client, a.slice(3), { header: `Bearer ${keys.get('ci-three')}`, from: 4 }, uuidOf(a));
    expect(other.error?.code).toBe(grpc.status.PERMISSION_DENIED);
    // Bazel resumes each on a new stream with what was not acknowledged: one build each.
    for (const events of [a, b]) {
      const resumed = await stream(client, events.slice(3), { header, from: 4 }, uuidOf(events));
      expect(resumed.error).toBeUndefined();
    }
    const invocations = [a, b].map((e) => buildIdFromInvocation(uuidOf(e)));
    for (const id of invocations) expect((await server.build(id))['buildToolType']).toBe('targetbuild');
    expect((await stream(client, c, { header })).error).toBeUndefined();
  });

  it('refuses hostile sequence numbers, IDs and streams that are not a build, and stays up', async () => {
    const header = `Bearer ${keys.get('ci-three')}`;
    const [first] = recorded();
    const raw = async (requests: Record<string, unknown>[]) => {
      const { call, done } = open(client, header);
      for (const r of requests) call.write(r);
      call.end();
      return done;
    };
    for (const sequence of ['abc', '0', '-5', '99999999999999999999']) {
      const r = await raw([request(randomUUID(), sequence, first!)]);
      expect(r.error?.code, sequence).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.error?.details).toContain('sequence_number');
    }
    const anonymousStream = request('', 1, first!);
    (anonymousStream['orderedBuildEvent'] as { streamId: object }).streamId = {};
    expect((await raw([anonymousStream])).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await raw([request('x'.repeat(300), 1, first!)])).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    const two = randomUUID();
    expect((await raw([request(two, 1, first!), request(randomUUID(), 2, first!)])).error?.details).toContain('one invocation');
    // Bytes that are not a Bazel event are skipped (acknowledged); a stream without BuildStarted is no build.
    const garbage = request(randomUUID(), 1, first!);
    ((garbage['orderedBuildEvent'] as { event: { bazelEvent: { value: Buffer } } }).event.bazelEvent.value as Buffer) = Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01]);
    const id = (garbage['orderedBuildEvent'] as { streamId: { invocationId: string } }).streamId.invocationId;
    const notABuild = await raw([garbage, request(id, 2, 'finished')]);
    expect(notABuild.acks).toEqual([1, 2]);
    expect(notABuild.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(notABuild.error?.details).toContain('BuildStarted');
    // A request that is not a PublishBuildToolEventStreamRequest at all.
    const Raw = grpc.makeGenericClientConstructor(
      { PublishBuildToolEventStream: { path: '/google.devtools.build.v1.PublishBuildEvent/PublishBuildToolEventStream', requestStream: true, responseStream: true, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
      'Raw',
    );
    const rawClient = new Raw(server.besUrl!.replace('grpc://', ''), grpc.credentials.createInsecure()) as unknown as Record<string, (m: grpc.Metadata) => grpc.ClientDuplexStream<Buffer, Buffer>>;
    const metadata = new grpc.Metadata();
    metadata.set('authorization', header);
    const bad = rawClient['PublishBuildToolEventStream']!(metadata);
    const status = new Promise<grpc.ServiceError | undefined>((resolve) => {
      bad.on('error', resolve);
      bad.on('end', () => resolve(undefined));
      bad.on('data', () => undefined);
    });
    bad.write(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    bad.end();
    expect((await status)?.code).toBe(grpc.status.INTERNAL);
    (rawClient as unknown as grpc.Client).close();
    // Still serving.
    expect((await stream(client, withInvocation(recorded(), randomUUID()), { header })).error).toBeUndefined();
  });
});


