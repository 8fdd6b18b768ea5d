// pytest end to end: Debian's pytest (pytest-3, 7.2.1) runs a small suite (passing, failing,
// erroring) with the plugin shipped in this package, against a real Buildscope server: with
// PYTHONPATH and -p, installed into a virtual environment (no -p), with a collection error, and
// with the server down (spooled, then delivered with the next run).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitRemoteCases, redactionCases } from './redaction-tables.js';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';
import { CLI } from '../support/compiled-cli.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { buildPages } from './build-page.js';

const PLUGIN_DIR = resolve('src/agents/python/pylib');
const hasPytest = spawnSync('pytest-3', ['--version'], { encoding: 'utf8' }).status === 0;

const SUITE = `import pytest

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    print("about to fail")
    assert 1 + 1 == 3

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_errors(broken):
    pass

@pytest.mark.skip(reason="not yet")
def test_later():
    pass

@pytest.mark.parametrize("a,b", [(1, 2), (2, 4)])
def test_doubles(a, b):
    assert a * 2 == b
`;

describe.skipIf(!hasPytest)('pytest with the buildscope_pytest plugin', () => {
  let server: AgentTestServer;
  let dir: string;
  let project: string;
  // The whole suite (failing) and a later run of its passing test alone, compared after both ran.
  let failingBuild = '';
  let passingBuild = '';
  const pages = buildPages();

  beforeAll(async () => {
    server = await startAgentTestServer();
    dir = mkdtempSync(join(tmpdir(), 'bs-pytest-'));
    project = join(dir, 'tiny-py');
    mkdirSync(project);
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "tiny-py"\nversion = "0.1"\n');
    writeFileSync(join(project, 'test_suite.py'), SUITE);
  }, 60_000);
  afterAll(async () => {
    await pages.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['CI', 'GITHUB_ACTIONS', 'GITLAB_CI', 'JENKINS_URL', 'BUILDKITE', 'CIRCLECI', 'TF_BUILD', 'TRAVIS', 'PYTHONPATH']) delete base[k];
    // Synchronous sending unless a test asks otherwise: the build is stored when pytest exits.
    return { ...base, HOME: dir, PYTHONDONTWRITEBYTECODE: '1', BUILDSCOPE_SEND: 'sync', BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: server.accessKey, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool'), ...extra };
  };
  const pytest = (args: string[], extra: Record<string, string> = {}, cwd = project) =>
    run('pytest-3', ['-p', 'buildscope_pytest', '-p', 'no:cacheprovider', ...args], { cwd, env: env({ PYTHONPATH: PLUGIN_DIR, ...extra }) });

  it('records a session with a passing, a failing and an erroring test', async () => {
    const r = await pytest(['-q', 'test_suite.py'], { BUILDSCOPE_TAGS: 'suite' });
    expect(r.status).toBe(1); // pytest's own status, untouched
    expect(r.stdout).toContain('1 failed, 3 passed, 1 skipped, 1 error');
    const link = r.stderr.trim().split('\n').at(-1)!;
    expect(link).toMatch(new RegExp(`^Buildscope: ${server.url}/builds/[0-9a-z]{13}$`));
    const id = link.split('/').at(-1)!;
    failingBuild = id;
    expect(await server.search('buildTool:pybuild buildOutcome:failed hasVerificationFailure')).toEqual([id]);
    expect(await server.search('pybuild.projectName:tiny-py pybuild.requestedCommands:"pytest -p buildscope_pytest*" tag:LOCAL tag:suite')).toEqual([id]);
    expect(await server.search('pybuild.environment.operatingSystem:Linux pybuild.environment.numberOfCpuCores>0 pybuild.environment.locale:*')).toEqual([id]);
    expect(await server.search('hasNonVerificationFailure')).toEqual([]);
    const events = await server.events(id);
    const tasks = events.filter((e) => e.eventType === 'TaskFinished').map((e) => [e.data['path'], e.data['outcome']]);
    expect(tasks).toEqual([
      ['test_suite.py::test_passes', 'success'],
      ['test_suite.py::test_fails', 'failed'],
      ['test_suite.py::test_errors', 'failed'],
      ['test_suite.py::test_later', 'skipped'],
      ['test_suite.py::test_doubles[1-2]', 'success'],
      ['test_suite.py::test_doubles[2-4]', 'success'],
    ]);
    for (const t of events.filter((e) => e.eventType === 'TaskFinished')) expect(t.data['durationMs']).toBeGreaterThanOrEqual(0);
    const cause = { type: 'AssertionError', message: 'assert (1 + 1) == 3', stackTrace: expect.stringMatching(/^def test_fails\(\):\n[^]*>\s+assert 1 \+ 1 == 3\nE\s+assert \(1 \+ 1\) == 3\n\ntest_suite\.py:\d+: AssertionError$/) };
    expect(events.at(-1)!.data).toMatchObject({
      outcome: 'failed',
      failures: [
        { classification: 'verification', message: 'Test test_suite.py::test_fails failed', cause },
        { classification: 'verification', message: 'Test test_suite.py::test_errors errored in setup', cause: { type: 'RuntimeError', message: 'fixture broke' } },
      ],
    });

    // Each test: identity (parameters apart), outcome, why, its own output, and when it ran.
    const started = new Map(events.filter((e) => e.eventType === 'TestStarted').map((e) => [e.data['id'], e]));
    const output = events.filter((e) => e.eventType === 'TestOutput');
    const tests = events
      .filter((e) => e.eventType === 'TestFinished')
      .map((e) => ({ ...started.get(e.data['id'])!.data, ...e.data, startedAt: started.get(e.data['id'])!.timestamp, finishedAt: e.timestamp }));
    expect(tests.map(({ startedAt, finishedAt, ...t }) => t)).toEqual([
      { id: 1, suite: 'test_suite.py', name: 'test_passes', outcome: 'passed' },
      { id: 2, suite: 'test_suite.py', name: 'test_fails', outcome: 'failed', failure: cause },
      { id: 3, suite: 'test_suite.py', name: 'test_errors', outcome: 'failed', failure: { type: 'RuntimeError', message: 'fixture broke', stackTrace: expect.stringContaining('E       RuntimeError: fixture broke') } },
      { id: 4, suite: 'test_suite.py', name: 'test_later', outcome: 'skipped', skipReason: 'not yet' },
      { id: 5, suite: 'test_suite.py', name: 'test_doubles', parameters: '1-2', displayName: 'test_doubles[1-2]', outcome: 'passed' },
      { id: 6, suite: 'test_suite.py', name: 'test_doubles', parameters: '2-4', displayName: 'test_doubles[2-4]', outcome: 'passed' },
    ]);
    expect(output.map((e) => e.data)).toEqual([{ id: 2, stream: 'stdout', text: 'about to fail\n' }]);
    // Real start times: the session's tests one after the other, not all at the build's start.
    const buildStart = events.find((e) => e.eventType === 'BuildStarted')!.timestamp;
    for (const [a, b] of tests.slice(1).map((t, i) => [tests[i]!, t] as const)) expect(b.startedAt).toBeGreaterThanOrEqual(a.finishedAt);
    expect(tests.at(-1)!.startedAt).toBeGreaterThan(buildStart);
    // The console: what pytest's terminal reporter printed, exactly, in order.
    const console = events.filter((e) => e.eventType === 'ConsoleOutput');
    expect(console.length).toBeGreaterThan(0);
    expect(console.every((e) => e.data['stream'] === 'stdout' && e.data['truncated'] === undefined)).toBe(true);
    expect(console.map((e) => e.data['text']).join('')).toBe(r.stdout);
    expect(events.find((e) => e.eventType === 'ServerSettings')!.data).toEqual({ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: true });

    // Its page: the failing and the erroring test and why each failed, and pytest's own summary.
    await pages.check(server, id, {
      tool: 'pytest',
      outcome: 'failed',
      failedTests: [
        { name: 'test_suite.py.test_fails', message: 'assert (1 + 1) == 3' },
        { name: 'test_suite.py.test_errors', message: 'fixture broke' },
      ],
      failed: ['test_suite.py::test_fails', 'test_suite.py::test_errors'],
      consoleLines: ['1 failed, 3 passed, 1 skipped, 1 error'],
      screenshot: true,
    });
  }, 60_000);

  it('sends no console when consoleOutput is off, and says so', async () => {
    const r = await pytest(['-q', 'test_suite.py'], { BUILDSCOPE_CONSOLE_OUTPUT: 'off' });
    expect(r.status).toBe(1);
    const id = r.stderr.trim().split('\n').at(-1)!.split('/').at(-1)!;
    const events = await server.events(id);
    expect(events.filter((e) => e.eventType === 'ConsoleOutput')).toEqual([]);
    expect(events.find((e) => e.eventType === 'ServerSettings')!.data).toEqual({ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: false });
  }, 60_000);

  it('reads a test\'s identity, failure and skip reason from pytest\'s words (no pytest needed)', () => {
    const script = `import json, buildscope_pytest as b
print(json.dumps([b.identity_of("tests/test_a.py::TestA::test_x[1-2]"), b.identity_of("test_b.py::test_y[a::b]"), b.identity_of("test_c.py::test_z"),
  b.failure_of("def f():\\n>  assert x\\nE  assert 0\\n\\nt.py:3: AssertionError", "assert 0"), b.failure_of("E  KeyError: 'k'", "KeyError: 'k'"),
  b.failure_of("x" * 20000, None)["stackTrace"].__len__(), b.skip_reason_of(("t.py", 3, "Skipped: not yet")), b.skip_reason_of(None)]))`;
    const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: PLUGIN_DIR } });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      ['tests/test_a.py::TestA', 'test_x', '1-2'],
      ['test_b.py', 'test_y', 'a::b'],
      ['test_c.py', 'test_z', null],
      { type: 'AssertionError', message: 'assert 0', stackTrace: 'def f():\n>  assert x\nE  assert 0\n\nt.py:3: AssertionError' },
      { type: 'KeyError', message: "'k'", stackTrace: "E  KeyError: 'k'" },
      16384,
      'not yet',
      null,
    ]);
  });

  it('records a collection error as a non-verification failure, redacting the agent host on request', async () => {
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'test_broken.py'), 'def test_x(:\n    pass\n');
    const r = await pytest(['-q'], { BUILDSCOPE_TAGS: 'collection', BUILDSCOPE_REDACT: 'all' }, broken);
    expect(r.status).toBe(2);
    const ids = await server.search('buildTool:pybuild tag:collection buildOutcome:failed hasNonVerificationFailure');
    expect(ids).toHaveLength(1);
    // Redacted on request: no user, host names or addresses.
    expect((await server.events(ids[0]!)).find((e) => e.eventType === 'BuildAgent')!.data).toEqual({});
    expect((await server.events(ids[0]!)).at(-1)!.data['failures']).toEqual([{ classification: 'non-verification', message: 'Collection of test_broken.py failed' }]);
    // Its page: the module that did not collect, where and why.
    await pages.check(server, ids[0]!, {
      tool: 'pytest',
      outcome: 'failed',
      failed: ['Collection of test_broken.py failed'],
      diagnostics: [{ file: 'test_broken.py', line: 1 }],
      causes: ['SyntaxError'],
      consoleLines: ['SyntaxError: invalid syntax', 'Interrupted: 1 error during collection'],
    });
  }, 60_000);

  it('the shared git remote and redaction tables give the same results through the plugin\'s own rules', async () => {
    const script = [
      'import json, sys, time',
      'import buildscope_pytest as b',
      'remotes, texts = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))',
      'out = {"remotes": [b._without_user_info(c["remote"]) for c in remotes["cases"]], "texts": [b._redact_text(c["text"], texts["listed"]) for c in texts["cases"]], "ms": []}',
      'for a in texts["adversarial"]:',
      '    t = time.time(); b._redact_text(a["piece"] * a["times"], texts["listed"]); out["ms"].append((time.time() - t) * 1000)',
      'print(json.dumps(out))',
    ].join('\n');
    const r = await run('python3', ['-c', script, 'test/agents/fixtures/git-remote-cases.json', 'test/agents/fixtures/redaction-cases.json'], { env: env({ PYTHONPATH: PLUGIN_DIR }) });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { remotes: string[]; texts: string[]; ms: number[] };
    expect(out.remotes).toEqual(gitRemoteCases.cases.map((c) => c.sent));
    expect(out.texts).toEqual(redactionCases.cases.map((c) => c.redacted));
    // Python's backtracking engine takes ~0.1-0.6 s on each of these here; a catastrophic pattern, minutes.
    for (const [i, ms] of out.ms.entries()) expect(ms, JSON.stringify(redactionCases.adversarial[i])).toBeLessThan(10_000);
  }, 120_000);

  it('a session whose failures name secrets sends none of them, nor its git remote\'s password; a readable agent.properties is warned about', async () => {
    const leaky = join(dir, 'leaky');
    mkdirSync(leaky);
    // Test IDs carry their parameters: these are in the node IDs, so in the failure messages.
    writeFileSync(
      join(leaky, 'test_leaky.py'),
      'import pytest\n\n@pytest.mark.parametrize("url", ["https://ci:hunter2@repo.example.com/x", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "Listed_S3cret"])\ndef test_fetch(url):\n    assert False, url\n',
    );
    const hostile = gitRemoteCases.cases.find((c) => c.name === 'raw # in the password')!;
    const git = (...args: string[]) => run('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', ...args], { cwd: leaky });
    for (const args of [['init', '-q'], ['add', '.'], ['commit', '-qm', 'first'], ['remote', 'add', 'origin', hostile.remote]]) expect((await git(...args)).status).toBe(0);
    const home = join(dir, 'agent-readable');
    mkdirSync(home);
    writeFileSync(join(home, 'agent.properties'), 'redactValues=Listed_S3cret\n', { mode: 0o644 });
    const plain = await run('pytest-3', ['-q', '-p', 'no:cacheprovider', 'test_leaky.py'], { cwd: leaky, env: env() });
    const r = await pytest(['-q', 'test_leaky.py'], { BUILDSCOPE_AGENT_DIR: home, BUILDSCOPE_TAGS: 'leaky' }, leaky);
    // pytest's own status and output, secrets included, are untouched.
    expect(r.status).toBe(plain.status);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('https://ci:hunter2@repo.example.com/x');
    const lines = r.stderr.trim().split('\n');
    expect(lines.at(-2)).toBe(`Buildscope: ${join(home, 'agent.properties')} can be read by other users (mode 0644); it holds an access key: chmod 600 it`);
    const id = lines.at(-1)!.split('/').at(-1)!;
    const events = await server.events(id);
    const text = JSON.stringify(events);
    for (const secret of ['hunter2', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'Listed_S3cret', 'ss-secret', server.accessKey]) expect(text).not.toContain(secret);
    expect((events.at(-1)!.data['failures'] as { message: string }[]).map((f) => f.message)).toEqual([
      'Test test_leaky.py::test_fetch[https://***@repo.example.com/x] failed',
      // A value runs to the next space or quote: the bracket that closes the ID goes with it.
      'Test test_leaky.py::test_fetch[token=*** failed',
      'Test test_leaky.py::test_fetch[***] failed',
    ]);
    expect(events.find((e) => e.eventType === 'UserNamedValue' && e.data['key'] === 'Git repository')!.data['value']).toBe(hostile.sent);
  }, 120_000);

  it('reads the server, key and spool from agent.properties, as every agent does', async () => {
    const agentDir = join(dir, 'agent-dir');
    mkdirSync(agentDir, { recursive: true });
    // Java properties as the JVM agents read them: `=` or `:` separators, comments.
    writeFileSync(join(agentDir, 'agent.properties'), `# Buildscope agents\nserver = ${server.url}/\naccessKey: ${server.accessKey}\n! spool\nspoolDir=${join(agentDir, 'spooled')}\nvalue.Team=py-team\nredact=username\n`);
    const r = await pytest(['-q', 'test_suite.py::test_passes'], { BUILDSCOPE_AGENT_DIR: agentDir, BUILDSCOPE_SERVER: '', BUILDSCOPE_ACCESS_KEY: '', BUILDSCOPE_SPOOL_DIR: '', BUILDSCOPE_TAGS: 'from-properties' });
    expect(r.status).toBe(0);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^Buildscope: ${server.url}/builds/[0-9a-z]{13}$`));
    // Values and redaction words from the file too, as every agent reads them (agent-contract.json).
    const [id] = await server.search('tag:from-properties value:"Team=py-team"');
    expect(id).toBeDefined();
    expect((await server.events(id!)).find((e) => e.eventType === 'BuildAgent')!.data['username']).toBeUndefined();
  }, 60_000);

  it('spools when the server is down and delivers both sessions, once each, with the next run', async () => {
    const port = await freePort();
    const spool = join(dir, 'spool-py');
    const down = await pytest(['-q', 'test_suite.py::test_passes'], { BUILDSCOPE_SERVER: `http://127.0.0.1:${port}`, BUILDSCOPE_SPOOL_DIR: spool, BUILDSCOPE_TAGS: 'py-spool' });
    expect(down.status).toBe(0);
    expect(down.stderr).toMatch(/build not sent .*kept in/);
    // The spool format every agent shares (src/agents/spool.ts): <id>.ndjson.
    expect(readdirSync(spool)).toEqual([expect.stringMatching(/^[0-9a-z]{13}\.ndjson$/)]);
    // Private to the user whatever the umask: the directory 0700, the build 0600.
    expect(statSync(spool).mode & 0o777).toBe(0o700);
    expect(statSync(join(spool, readdirSync(spool)[0]!)).mode & 0o777).toBe(0o600);
    const up = await pytest(['-q', 'test_suite.py::test_passes'], { BUILDSCOPE_SPOOL_DIR: spool, BUILDSCOPE_TAGS: 'py-spool' });
    expect(up.status).toBe(0);
    passingBuild = up.stderr.trim().split('\n').at(-1)!.split('/').at(-1)!;
    expect(await server.search('tag:py-spool buildOutcome:succeeded')).toHaveLength(2);
    expect(readdirSync(spool)).toEqual([]);
    await pages.check(server, passingBuild, { tool: 'pytest', outcome: 'succeeded', consoleLines: ['1 passed'] });
  }, 60_000);

  it('comparing the run of one passing test with the whole suite names the outcome, the failing tests by suite and name, the command that differs; the other way round swaps each', async () => {
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(passingBuild, failingBuild);
    expect(c.a).toMatchObject({ id: passingBuild, project: 'tiny-py', tool: 'pybuild', outcome: 'succeeded', tasks: 1, tests: 1 });
    expect(c.b).toMatchObject({ id: failingBuild, project: 'tiny-py', tool: 'pybuild', outcome: 'failed', tasks: 6, tests: 6 });
    const command = (target: string) => `pytest -p buildscope_pytest -p no:cacheprovider -q ${target}`;
    // Rules on the builds' durations come after these and depend on the machine's load.
    expect(c.summary.slice(0, 8)).toMatchObject([
      { reason: 'outcome', difference: { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' } },
      { reason: 'failing-task', difference: { kind: 'task-added', task: { path: 'test_suite.py::test_errors', outcome: 'failed' } } },
      { reason: 'failing-task', difference: { kind: 'task-added', task: { path: 'test_suite.py::test_fails', outcome: 'failed' } } },
      { reason: 'failing-test', difference: { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_errors', outcome: 'failed', attempts: 1 } } },
      { reason: 'failing-test', difference: { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_fails', outcome: 'failed', attempts: 1 } } },
      { reason: 'failure', difference: { kind: 'failure-added', failure: { classification: 'verification', message: 'Test test_suite.py::test_errors errored in setup' } } },
      { reason: 'failure', difference: { kind: 'failure-added', failure: { classification: 'verification', message: 'Test test_suite.py::test_fails failed' } } },
      { reason: 'requested', difference: { kind: 'list', group: 'requested', name: 'requested', added: [command('test_suite.py')], removed: [command('test_suite.py::test_passes')] } },
    ]);
    const section = (id: string) => c.sections.find((s) => s.id === id)!.differences;
    const timed = new Set(['task-duration', 'test-duration']);
    // test_passes ran in both, alike; the rest of the suite ran in the second only.
    expect(section('tasks').filter((d) => !timed.has(d.kind)).map((d) => (d.kind === 'task-added' ? `${d.task.path} ${d.task.outcome}` : d.kind))).toEqual([
      'test_suite.py::test_doubles[1-2] executed',
      'test_suite.py::test_doubles[2-4] executed',
      'test_suite.py::test_errors failed',
      'test_suite.py::test_fails failed',
      'test_suite.py::test_later skipped',
    ]);
    // The cases of the parametrized test are two tests, each run once, as on the build page.
    expect(section('tests').filter((d) => !timed.has(d.kind))).toEqual([
      { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_doubles', parameters: '1-2', outcome: 'passed', duration: expect.any(Number), attempts: 1 } },
      { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_doubles', parameters: '2-4', outcome: 'passed', duration: expect.any(Number), attempts: 1 } },
      { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_errors', outcome: 'failed', duration: expect.any(Number), attempts: 1 } },
      { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_fails', outcome: 'failed', duration: expect.any(Number), attempts: 1 } },
      { kind: 'test-added', test: { suite: 'test_suite.py', name: 'test_later', outcome: 'skipped', duration: expect.any(Number), attempts: 1 } },
    ]);
    // What was asked: the command and the tags the two runs were given, nothing of the machine.
    expect(section('asked')).toEqual([
      { kind: 'list', group: 'requested', name: 'requested', added: [command('test_suite.py')], removed: [command('test_suite.py::test_passes')] },
      { kind: 'list', group: 'tags', name: 'tags', added: ['suite'], removed: ['py-spool'] },
    ]);
    expect(section('header').filter((d) => !(d.kind === 'field' && d.name === 'duration'))).toEqual([
      { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' },
      { kind: 'field', group: 'counts', name: 'tasks', before: 1, after: 6 },
      { kind: 'field', group: 'counts', name: 'tasks executed', before: 1, after: 3 },
      { kind: 'field', group: 'counts', name: 'tasks failed', before: 0, after: 2 },
      { kind: 'field', group: 'counts', name: 'tests', before: 1, after: 6 },
      { kind: 'field', group: 'counts', name: 'tests failed', before: 0, after: 2 },
    ]);
    expect(section('failures').map((d) => d.kind)).toEqual(['failure-added', 'failure-added']);

    const back = await compare(failingBuild, passingBuild);
    expectSwapped(c, back);
  }, 60_000);

  it('in the background with the server down, says the build was kept rather than print a link', async () => {
    const port = await freePort();
    const spool = join(dir, 'spool-background');
    const r = await pytest(['-q', 'test_suite.py::test_passes'], { BUILDSCOPE_SEND: '', BUILDSCOPE_SERVER: `http://127.0.0.1:${port}`, BUILDSCOPE_SPOOL_DIR: spool });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('/builds/');
    expect(r.stderr).toContain(`Buildscope: build not sent (http://127.0.0.1:${port} does not answer); kept in ${spool}`);
    expect(readdirSync(spool)).toEqual([expect.stringMatching(/^[0-9a-z]{13}\.ndjson$/)]);
  }, 60_000);

  it('sends in the background outside CI: pytest exits at once, the build arrives after', async () => {
    const r = await pytest(['-q', 'test_suite.py::test_passes'], { BUILDSCOPE_SEND: '', BUILDSCOPE_TAGS: 'background' });
    expect(r.status).toBe(0);
    const id = /Buildscope: \S+\/builds\/([0-9a-z]{13})$/m.exec(r.stderr)?.[1];
    expect(id).toBeDefined();
    let ids: string[] = [];
    await waitFor(async () => (ids = await server.search('tag:background')).length > 0, 'the build sent in the background', 15_000, 250).catch(() => undefined);
    expect(ids).toEqual([id]);
  }, 60_000);

  it('agent python prints how to enable the plugin and installs it into a virtual environment, where pytest loads it by itself', async () => {
    const shown = await run(process.execPath, [...CLI, 'agent', 'python'], { env: env({ BUILDSCOPE_SERVER: server.url }) });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain(`PYTHONPATH=${PLUGIN_DIR}`);
    expect(shown.stdout).toContain('pytest -p buildscope_pytest');
    const venv = join(dir, 'venv');
    // Debian's python3 with its pytest visible; no pip needed.
    const made = await run('/usr/bin/python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv]);
    expect(made.status, made.stderr).toBe(0);
    const installed = await run(process.execPath, [...CLI, 'agent', 'python', '--install', '--venv', venv]);
    expect(installed.status, installed.stderr).toBe(0);
    expect(existsSync(join(venv, 'bin', 'python'))).toBe(true);
    // The patterns travel with the module (the installed copy cannot reach this package's agents/).
    const lib = readdirSync(join(venv, 'lib')).find((d) => d.startsWith('python'))!;
    expect(existsSync(join(venv, 'lib', lib, 'site-packages', 'buildscope_pytest_redaction.json'))).toBe(true);
    const r = await run(join(venv, 'bin', 'python'), ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_suite.py::test_passes'], { cwd: project, env: env({ BUILDSCOPE_TAGS: 'venv' }) });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Buildscope: http/);
    expect(await server.search('buildTool:pybuild tag:venv buildOutcome:succeeded')).toHaveLength(1);
  }, 60_000);
});
