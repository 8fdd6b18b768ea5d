// Why a Bazel action missed the cache, with the real Bazel (Debian's bazel-bootstrap 4.2.3) and a
// cache node as its gRPC remote cache: two genrules are built once to fill the cache, then, after
// `bazel clean`, again (both from the remote cache), then, after one input file changed and
// `bazel clean`, a third time (one from the cache, one run). The second and third builds, loaded by
// `ingest-bep --execution-log`, compare over HTTP: the comparison names that target's action and
// that file, and nothing else.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExecutionLog } from '../../src/agents/bazel/execution-log.js';
import { bazelWorkspace, hasBazel, type BazelWorkspace } from '../support/bazel.js';
import { fastHash, startTestNode, type TestNode } from '../cache-node/helpers.js';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';
import { CLI } from '../support/compiled-cli.js';

const BUILD = `genrule(
    name = "shout",
    srcs = ["message.txt"],
    outs = ["shout.txt"],
    cmd = "tr a-z A-Z < $< > $@",
)

genrule(
    name = "steady",
    srcs = ["other.txt"],
    outs = ["steady.txt"],
    cmd = "cat $< > $@",
)
`;

describe.skipIf(!hasBazel)('why a Bazel action missed the remote cache, from its execution log', () => {
  let server: AgentTestServer;
  let node: TestNode;
  let ws: BazelWorkspace;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ws = bazelWorkspace('bs-bazel-miss-');
    mkdirSync(join(ws.workspace, 'cachemiss'));
    writeFileSync(join(ws.workspace, 'cachemiss', 'BUILD'), BUILD);
    writeFileSync(join(ws.workspace, 'cachemiss', 'message.txt'), 'hello\n');
    writeFileSync(join(ws.workspace, 'cachemiss', 'other.txt'), 'unchanged\n');
    node = await startTestNode(
      { version: 4, cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-password') } } } }, uiAccess: { type: 'open' } },
      { grpcPort: 0 },
    );
    server = await startAgentTestServer();
  }, 120_000);
  afterAll(async () => {
    await ws?.close();
    await server?.close();
    await node?.close();
  }, 120_000);

  /** `bazel build //cachemiss:all` with the remote cache, its event file and execution log; then ingest-bep sends both. */
  const build = async (name: string): Promise<{ id: string; spawns: Record<string, unknown>[] }> => {
    const bep = join(ws.dir, `${name}.bep.json`);
    const log = join(ws.dir, `${name}.exec.json`);
    const cache = [`--remote_cache=${node.node.grpcUrl}`, `--remote_header=Authorization=Basic ${Buffer.from('ci:ci-password').toString('base64')}`];
    const r = await ws.bazel(['build', '//cachemiss:all', ...ws.offline, ...cache, `--build_event_json_file=${bep}`, `--execution_log_json_file=${log}`]);
    expect(r.status, r.output).toBe(0);
    const cli = await run(process.execPath, [...CLI, 'ingest-bep', bep, '--execution-log', log, '--server', server.url], {
      env: { ...process.env, BUILDSCOPE_ACCESS_KEY: server.accessKey, BUILDSCOPE_SPOOL_DIR: join(ws.dir, 'spool') },
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stderr).toBe('');
    return { id: cli.stdout.trim().split('/').at(-1)!, spawns: parseExecutionLog(readFileSync(log, 'utf8')) };
  };
  const hits = (spawns: Record<string, unknown>[]) => Object.fromEntries(spawns.map((s) => [String(s['progressMessage']), s['remoteCacheHit'] === true]));

  it('sends one TaskInputs per action the log holds, keyed by target, mnemonic and output, with its input files and whether it came from the remote cache', async () => {
    const first = await build('fill');
    // An empty cache: both ran.
    expect(hits(first.spawns)).toEqual({ 'Executing genrule //cachemiss:shout': false, 'Executing genrule //cachemiss:steady': false });
    expect((await ws.bazel(['clean'])).status).toBe(0);
    const cached = await build('cached');
    expect(hits(cached.spawns)).toEqual({ 'Executing genrule //cachemiss:shout': true, 'Executing genrule //cachemiss:steady': true });
    ids['cached'] = cached.id;
    const inputs = (await server.events(cached.id)).filter((e) => e.eventType === 'TaskInputs').map((e) => e.data);
    // In the log's order, which is the order the actions ended.
    const rows = inputs.map((d) => [d['path'], d['target'], d['mnemonic'], d['remoteCacheHit']]).sort((x, y) => (String(x[1]) < String(y[1]) ? -1 : 1));
    expect(rows).toEqual([
      [expect.stringMatching(/^\/\/cachemiss:shout Genrule bazel-out\/[^ ]+\/bin\/cachemiss\/shout\.txt$/), '//cachemiss:shout', 'Genrule', true],
      [expect.stringMatching(/^\/\/cachemiss:steady Genrule bazel-out\/[^ ]+\/bin\/cachemiss\/steady\.txt$/), '//cachemiss:steady', 'Genrule', true],
    ]);
    const shout = inputs.find((d) => d['target'] === '//cachemiss:shout')!;
    expect(Object.keys(shout['files'] as object)).toEqual(['inputs']);
    expect((shout['files'] as Record<string, Record<string, string>>)['inputs']!['cachemiss/message.txt']).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(shout['inputs'] as object)).toEqual(expect.arrayContaining(['inputs', 'command line']));
    expect(shout['outputs']).toEqual([expect.stringMatching(/cachemiss\/shout\.txt$/)]);
  }, 600_000);

  it('the comparison with a build where one input changed names that action and that file, and nothing else; the other way round swaps it', async () => {
    writeFileSync(join(ws.workspace, 'cachemiss', 'message.txt'), 'hello again\n');
    expect((await ws.bazel(['clean'])).status).toBe(0);
    const changed = await build('changed');
    expect(hits(changed.spawns)).toEqual({ 'Executing genrule //cachemiss:shout': false, 'Executing genrule //cachemiss:steady': true });
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(ids['cached']!, changed.id);
    const miss = {
      kind: 'task-inputs',
      path: expect.stringMatching(/^\/\/cachemiss:shout Genrule .*cachemiss\/shout\.txt$/),
      occurrence: 1,
      missed: true,
      before: null,
      after: null,
      implementation: false,
      inputs: [{ name: 'inputs', change: 'changed', files: [{ path: 'cachemiss/message.txt', change: 'changed' }], filesOmitted: false, producedBy: [] }],
      cause: 'inputs',
    };
    const tasks = c.sections.find((s) => s.id === 'tasks')!;
    expect(tasks.differences.filter((d) => d.kind !== 'task-duration')).toEqual([miss]);
    expect(c.summary.filter((e) => e.reason === 'cache-miss')).toEqual([{ reason: 'cache-miss', difference: miss }]);
    // Nothing else of the two builds differs but their times.
    for (const s of c.sections.filter((s) => s.id !== 'tasks')) expect(s.differences.filter((d) => !(d.kind === 'field' && d.name === 'duration')), s.id).toEqual([]);
    expectSwapped(c, await compare(changed.id, ids['cached']!));
  }, 600_000);
});
