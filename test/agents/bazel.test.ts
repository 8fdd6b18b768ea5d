// Bazel end to end: Debian's bazel-bootstrap (4.2.3) builds a small offline workspace (a genrule
// and a shell test) with --bes_backend pointing at a real Buildscope server, once passing and once
// with a failing test, and once writing a JSON event file that `ingest-bep` sends; each build is
// found by the searches a user types and its events export; and a failing test built with
// --remote_cache on a cache node the server reads (bes.cacheNodes), whose JUnit report and log
// reach the build through the bytestream:// URIs of the live stream. One Bazel server (one
// output base), one Buildscope server and one cache node serve every case.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bazelWorkspace, hasBazel, type BazelWorkspace } from '../support/bazel.js';
import { fastHash, startTestNode, type TestNode } from '../cache-node/helpers.js';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';
import { CLI } from '../support/compiled-cli.js';
import { buildPages } from './build-page.js';

describe.skipIf(!hasBazel)('Bazel through the Build Event Service', () => {
  let server: AgentTestServer;
  let node: TestNode;
  let ws: BazelWorkspace;
  let dir: string;
  // The passing `bazel test //...` and the one with a failing test, compared after both ran.
  let passingBuild = '';
  let failingBuild = '';
  const bazel = (args: readonly string[]) => ws.bazel(args);
  const offline = () => ws.offline;
  const pages = buildPages();

  beforeAll(async () => {
    ws = bazelWorkspace('bs-bazel-');
    dir = ws.dir;
    node = await startTestNode(
      {
        version: 4,
        cache: {
          accessControl: {
            anonymousLevel: 'none',
            users: { ci: { level: 'readwrite', password: await fastHash('ci-password') }, buildscope: { level: 'read', password: await fastHash('buildscope-password') } },
          },
        },
        uiAccess: { type: 'open' },
      },
      { grpcPort: 0 },
    );
    // The server reads test outputs from this node only, as its read-only user.
    const grpcAddress = node.node.grpcUrl!.replace(/^grpc:\/\//, '');
    server = await startAgentTestServer({ bes: { cacheNodes: [{ address: grpcAddress, user: 'buildscope', password: 'buildscope-password' }] } });
  }, 120_000);

  afterAll(async () => {
    await pages.close();
    await ws?.close();
    await server?.close();
    await node?.close();
  }, 120_000);

  // Bazel 4 has no --bes_header (Bazel 5 added it) and sends no other header to a BES backend;
  // the access key travels as a keyword in the stream's first request.
  const bes = (key: string): string[] => [`--bes_backend=${server.besUrl}`, `--bes_keywords=buildscope_access_key=${key}`, '--bes_timeout=60s'];

  it('records a passing build with its targets, tasks, user, host and build metadata', async () => {
    const r = await bazel(['test', '//...', ...offline(), ...bes(server.accessKey), `--bes_results_url=${server.url}/builds/bazel/`, '--build_metadata=ROLE=CI', '--build_metadata=TAGS=nightly,e2e', '--build_metadata=Team=infra']);
    expect(r.status, r.output).toBe(0);
    // Stored before Bazel's stream closed: listed as soon as Bazel exits.
    const ids = await server.search('buildTool:targetbuild targetbuild.requestedTargets://... buildOutcome:succeeded');
    expect(ids).toHaveLength(1);
    const id = ids[0]!;
    passingBuild = id;
    // Bazel's own link line leads to the build.
    const link = new RegExp(`Streaming build results to: (${server.url}/builds/bazel/[0-9a-f-]{36})`).exec(r.output)?.[1];
    expect(link, r.output).toBeDefined();
    const redirect = await fetch(link!, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(`/builds/${id}`);
    expect(await server.search('tag:nightly tag:CI value:"Team=infra" project:workspace')).toEqual([id]);
    expect(await server.search('hasVerificationFailure')).toEqual([]);
    const build = await server.build(id);
    expect(build.attributes?.['user']).toBeTruthy();
    expect(build.attributes?.['hostname']).toBeTruthy();
    const events = await server.events(id);
    expect(events[0]!.eventType).toBe('BuildStarted');
    expect(events.at(-1)!.eventType).toBe('BuildFinished');
    const finished = events.filter((e) => e.eventType === 'TaskFinished').map((e) => [e.data['path'], e.data['outcome']]);
    expect(finished).toEqual(expect.arrayContaining([['//:greeting', 'success'], ['//:greeting_test', 'success']]));
    expect(events.find((e) => e.eventType === 'BuildRequestedTasks')!.data['requested']).toEqual(['//...']);
    // Bazel streams the client's environment (--client_env=...) and the access key keyword in its
    // command line events; none of that is stored.
    expect(JSON.stringify(events)).not.toMatch(/client_env|PATH=|buildscope_access_key|${server.accessKey}/);
    // The page says the build passed.
    await pages.check(server, id, { tool: 'bazel', outcome: 'succeeded' });
  }, 240_000);

  it('records a failing test as a verification failure', async () => {
    const file = join(dir, 'failing.json');
    const r = await bazel(['test', '//...', ...offline(), ...bes(server.accessKey), '--test_env=GREETING_FAIL=1', `--build_event_json_file=${file}`]);
    expect(r.status, r.output).toBe(3); // Bazel: tests failed
    const ids = await server.search('buildTool:targetbuild buildOutcome:failed hasVerificationFailure');
    expect(ids).toHaveLength(1);
    expect(await server.search('buildOutcome:failed hasNonVerificationFailure')).toEqual([]);
    failingBuild = ids[0]!;
    const events = await server.events(ids[0]!);
    const test = events.find((e) => e.eventType === 'TaskFinished' && e.data['path'] === '//:greeting_test');
    expect(test?.data).toMatchObject({ outcome: 'failed', testStatus: 'FAILED' });
    const finished = events.at(-1)!;
    expect(finished.data).toMatchObject({ outcome: 'failed', failures: [{ classification: 'verification', message: 'Test //:greeting_test FAILED' }] });
    // Over the live stream the target is the test (its files are on the client's disk), and says so.
    expect(events.filter((e) => e.eventType === 'TestFinished').map((e) => [e.data['outcome'], (e.data['failure'] as { message: string }).message])).toEqual([['failed', '//:greeting_test FAILED']]);
    const unread = events.find((e) => e.eventType === 'TestFinished')!.data['unreadOutputs'] as { name: string; uri: string; reason: string }[];
    expect(unread.map((u) => [u.name, u.reason])).toEqual([['test.log', 'clientFile'], ['test.xml', 'clientFile']]);
    // From the event file on the build machine, Bazel's own report and log: why it failed.
    const { buildFromEventFile } = await import('../../src/agents/bazel/ingest-bep.js');
    const fromFile = (await buildFromEventFile(file)).events;
    expect(fromFile.filter((e) => e.type.eventType === 'TestStarted').map((e) => [e.data['suite'], e.data['name'], e.data['task']])).toEqual([['greeting_test', 'greeting_test', '//:greeting_test']]);
    expect(fromFile.find((e) => e.type.eventType === 'TestFinished')!.data).toMatchObject({ outcome: 'failed', attempt: 1, failure: { message: 'exited with error code 1' } });
    expect(fromFile.find((e) => e.type.eventType === 'TestOutput')!.data['text']).toContain('greeting test failed on purpose');
    // Bazel's console, from the file as from the live stream: its FAIL line names the test.
    const consoleOf = (texts: unknown[]) => texts.join('');
    expect(consoleOf(fromFile.filter((e) => e.type.eventType === 'ConsoleOutput').map((e) => e.data['text']))).toContain('FAIL: //:greeting_test');
    expect(consoleOf(events.filter((e) => e.eventType === 'ConsoleOutput').map((e) => e.data['text']))).toContain('FAIL: //:greeting_test');
    // Its page: the failed test target, why its log is not there, and Bazel's own lines.
    await pages.check(server, failingBuild, {
      tool: 'bazel',
      outcome: 'failed',
      failedTests: [{ name: '//.greeting_test', message: '//:greeting_test FAILED' }],
      failed: ['//:greeting_test'],
      causes: ['Not read: test.log (it stayed on the build machine'],
      consoleLines: ['FAIL: //:greeting_test', 'Executed 1 out of 1 test: 1 fails locally.'],
    });
  }, 240_000);

  it('comparing the passing build with the failing one names the outcome, the failing test target and test, and the metadata only the first had; the other way round swaps each', async () => {
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(passingBuild, failingBuild);
    expect(c.a).toMatchObject({ id: passingBuild, project: 'workspace', tool: 'targetbuild', outcome: 'succeeded', tasks: 2, tests: 1 });
    expect(c.b).toMatchObject({ id: failingBuild, project: 'workspace', tool: 'targetbuild', outcome: 'failed', tasks: 2, tests: 1 });
    // Rules on the builds' durations come after these and depend on the machine's load (and on
    // Bazel's action cache, which spares the second build the genrule).
    expect(c.summary.slice(0, 4)).toMatchObject([
      { reason: 'outcome', difference: { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' } },
      { reason: 'failing-task', difference: { kind: 'task-outcome', path: '//:greeting_test', occurrence: 1, before: 'executed', after: 'failed' } },
      // Over the live stream (the report on the client's disk) the test is the target: package and name.
      { reason: 'failing-test', difference: { kind: 'test-outcome', suite: '//', name: 'greeting_test', before: 'passed', after: 'failed' } },
      { reason: 'failure', difference: { kind: 'failure-added', failure: { classification: 'verification', message: 'Test //:greeting_test FAILED' } } },
    ]);
    expect(c.summary.slice(4).map((e) => e.reason).every((r) => r === 'duration' || r === 'tasks' || r === 'slower-task')).toBe(true);
    const section = (id: string) => c.sections.find((s) => s.id === id)!.differences;
    const timed = new Set(['task-duration', 'test-duration']);
    expect(section('tasks').filter((d) => !timed.has(d.kind))).toEqual([{ kind: 'task-outcome', path: '//:greeting_test', occurrence: 1, before: 'executed', after: 'failed' }]);
    expect(section('tests').filter((d) => !timed.has(d.kind))).toEqual([{ kind: 'test-outcome', suite: '//', name: 'greeting_test', before: 'passed', after: 'failed' }]);
    // What was asked: the same targets; the first build's --build_metadata (its tags and values),
    // nothing of the machine.
    expect(section('asked')).toEqual([
      { kind: 'list', group: 'tags', name: 'tags', added: [], removed: ['CI', 'e2e', 'nightly'] },
      { kind: 'field', group: 'values', name: 'ROLE', before: 'CI', after: null },
      { kind: 'field', group: 'values', name: 'TAGS', before: 'nightly,e2e', after: null },
      { kind: 'field', group: 'values', name: 'Team', before: 'infra', after: null },
    ]);
    expect(section('header').filter((d) => !(d.kind === 'field' && d.name === 'duration'))).toEqual([
      { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' },
      { kind: 'field', group: 'counts', name: 'tasks executed', before: 2, after: 1 },
      { kind: 'field', group: 'counts', name: 'tasks failed', before: 0, after: 1 },
      { kind: 'field', group: 'counts', name: 'tests failed', before: 0, after: 1 },
    ]);
    expect(section('failures').map((d) => d.kind)).toEqual(['failure-added']);

    const back = await compare(failingBuild, passingBuild);
    expectSwapped(c, back);
  }, 60_000);

  it('records a target that fails to build as a non-verification failure, named on its page', async () => {
    // Its own package, left out of //... (manual): the other cases build the workspace as it was.
    mkdirSync(join(ws.workspace, 'broken'));
    writeFileSync(join(ws.workspace, 'broken', 'BUILD'), 'genrule(\n    name = "broken",\n    outs = ["broken.txt"],\n    cmd = "echo \'greeting.txt: no greeting to read\' >&2; exit 1",\n    tags = ["manual"],\n)\n');
    const r = await bazel(['build', '//broken', ...offline(), ...bes(server.accessKey), '--build_metadata=TAGS=broken-target']);
    expect(r.status, r.output).toBe(1); // Bazel: the build failed
    const ids = await server.search('tag:broken-target buildOutcome:failed hasNonVerificationFailure');
    expect(ids).toHaveLength(1);
    // The stream names the target; why it failed is in Bazel's console: its ERROR line and the command's own output.
    await pages.check(server, ids[0]!, { tool: 'bazel', outcome: 'failed', failed: ['//broken:broken'], consoleLines: ['Executing genrule //broken:broken failed', 'greeting.txt: no greeting to read'] });
  }, 240_000);

  it('refuses a stream without a valid access key, and stores nothing', async () => {
    const before = await server.search('buildTool:targetbuild');
    const r = await bazel(['build', '//...', ...offline(), ...bes('not-a-key')]);
    expect(r.output).toMatch(/UNAUTHENTICATED: Authentication failed/);
    expect(await server.search('buildTool:targetbuild')).toEqual(before);
  }, 240_000);

  it("shows a restricted publisher's refused build in Bazel's output, and stores nothing", async () => {
    const { openAuth } = await import('../../src/auth/index.js');
    const { parseConfig } = await import('../../src/config.js');
    const auth = await openAuth(server.server.database, parseConfig({}));
    await auth.users.addUser({ name: 'beta-only', password: 'beta-only-password-1', permissions: ['publishScan'], projects: ['beta'] });
    const { key } = await auth.users.createAccessKey('beta-only', { expiresAt: Date.now() + 86_400_000 });
    const r = await bazel(['build', '//:greeting', ...offline(), ...bes(key), '--build_metadata=PROJECT=alpha']);
    expect(r.output).toMatch(/FAILED_PRECONDITION: The build was not stored: .*"alpha"/);
    expect(await server.search('project:alpha')).toEqual([]);
  }, 240_000);

  it("keeps Bazel's exit code when the server is away, with --bes_upload_mode=nowait_for_upload_complete (docs: the file and ingest-bep keep the build)", async () => {
    // A port nothing listens on. With the default mode (wait_for_upload_complete) Bazel 4.2.3 exits 38.
    const r = await bazel(['test', '//...', ...offline(), '--test_env=GREETING_FAIL=1', '--bes_backend=grpc://127.0.0.1:1', '--bes_timeout=10s', '--bes_upload_mode=nowait_for_upload_complete']);
    expect(r.status, r.output).toBe(3); // Bazel: tests failed, as without the server
  }, 240_000);

  it('loads a --build_event_json_file file with ingest-bep', async () => {
    const file = join(dir, 'events.json');
    const r = await bazel(['build', '//:greeting', ...offline(), `--build_event_json_file=${file}`]);
    expect(r.status, r.output).toBe(0);
    // Asynchronously: the server runs in this process.
    const cli = await run(process.execPath, [...CLI, 'ingest-bep', file, '--server', server.url], {
      env: { ...process.env, BUILDSCOPE_ACCESS_KEY: server.accessKey, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool') },
    });
    expect(cli.status, cli.stderr).toBe(0);
    const link = cli.stdout.trim();
    expect(link).toMatch(new RegExp(`^${server.url}/builds/[0-9a-z]{13}$`));
    const id = link.split('/').at(-1)!;
    expect(await server.search('buildTool:targetbuild targetbuild.requestedTargets://:greeting')).toEqual([id]);
    const events = await server.events(id);
    expect(events.filter((e) => e.eventType === 'TaskFinished').map((e) => e.data['path'])).toEqual(['//:greeting']);
  }, 240_000);
  it("reads a failing test's JUnit report and log from the cache node the live stream names (--remote_cache=grpc://)", async () => {
    const cache = [`--remote_cache=${node.node.grpcUrl}`, `--remote_header=Authorization=Basic ${Buffer.from('ci:ci-password').toString('base64')}`];
    const readsBefore = node.node.status().bazel.grpc.cas.hits;
    const r = await bazel(['test', '//...', ...offline(), ...bes(server.accessKey), ...cache, '--test_env=GREETING_FAIL=1', '--build_metadata=TAGS=through-cache']);
    expect(r.status, r.output).toBe(3);
    const ids = await server.search('tag:through-cache hasVerificationFailure');
    expect(ids).toHaveLength(1);
    const events = await server.events(ids[0]!);
    // The case of Bazel's own report, its failure message and the log's tail, as from the build machine.
    expect(events.filter((e) => e.eventType === 'TestStarted').map((e) => [e.data['suite'], e.data['name'], e.data['task']])).toEqual([['greeting_test', 'greeting_test', '//:greeting_test']]);
    const finished = events.filter((e) => e.eventType === 'TestFinished');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.data).toMatchObject({ outcome: 'failed', attempt: 1, failure: { message: 'exited with error code 1' } });
    expect(finished[0]!.data['unreadOutputs']).toBeUndefined();
    expect(events.find((e) => e.eventType === 'TestOutput')!.data['text']).toContain('greeting test failed on purpose');
    // Read by the server from the node (the report and the log).
    expect(node.node.status().bazel.grpc.cas.hits - readsBefore).toBeGreaterThanOrEqual(2);
    // Its page: the failed test, and why, from the end of its log.
    await pages.check(server, ids[0]!, {
      tool: 'bazel',
      outcome: 'failed',
      failedTests: [{ name: 'greeting_test.greeting_test', message: 'exited with error code 1' }],
      failed: ['//:greeting_test'],
      causes: ['greeting test failed on purpose'],
      screenshot: true,
    });

    // URIs naming another cache (Bazel writes them with --remote_bytestream_uri_prefix) are not
    // read: the build is stored, the target is the test, and its TestFinished says why.
    const other = await bazel(['test', '//...', ...offline(), ...bes(server.accessKey), ...cache, '--remote_bytestream_uri_prefix=other-cache.example.com:5072', '--test_env=GREETING_FAIL=1', '--build_metadata=TAGS=other-cache']);
    expect(other.status, other.output).toBe(3);
    const [otherId] = await server.search('tag:other-cache hasVerificationFailure');
    const otherEvents = await server.events(otherId!);
    const test = otherEvents.find((e) => e.eventType === 'TestFinished')!;
    expect(test.data).toMatchObject({ outcome: 'failed', failure: { message: '//:greeting_test FAILED' } });
    const unread = test.data['unreadOutputs'] as { name: string; uri: string; reason: string }[];
    expect(unread.map((u) => [u.name, u.reason])).toEqual([['test.log', 'otherCache'], ['test.xml', 'otherCache']]);
    expect(unread[0]!.uri).toMatch(/^bytestream:\/\/other-cache\.example\.com:5072\/blobs\/[0-9a-f]{64}\/\d+$/);
  }, 300_000);
});
