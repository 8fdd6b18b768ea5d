// npm end to end: a small real package in a temp dir (scripts only, nothing to download) run with
// the installed npm through `buildscope run` and through the zero-touch NODE_OPTIONS form, against
// a real Buildscope server. Runs the compiled command (test/support/compiled-cli.ts), like every test of the CLI.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitRemoteCases } from './redaction-tables.js';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';
import { freePort } from '../support/ports.js';
import { CLI } from '../support/compiled-cli.js';
import { waitFor } from '../support/wait.js';
import { buildPages } from './build-page.js';

const PRELOAD = resolve('src/agents/npm/preload.cjs');

/** A test runner's stand-in: a JUnit XML report (a passing, a failing and a skipped test), its verdict on stdout, why on stderr. */
const TEST_JS = `const fs = require('node:fs');
fs.mkdirSync('reports/unit', { recursive: true });
fs.writeFileSync('reports/unit/junit.xml', \`<testsuites><testsuite name="price">
<testcase classname="price.test.js" name="rounds half cents" time="0.012"><failure message="expected 3 to equal 2" type="AssertionError">AssertionError: expected 3 to equal 2
    at price.test.js:7:12</failure><system-out>computing</system-out></testcase>
<testcase classname="price.test.js" name="adds" time="0.001"/>
<testcase classname="price.test.js" name="later" time="0"><skipped message="not yet"/></testcase>
</testsuite></testsuites>\`);
console.log('1 test failed');
console.error('AssertionError: expected 3 to equal 2');
process.exit(3);
`;

/** A package tested with node's own test runner: passing, failing, skipped, todo, nested and broken tests. */
const NODE_TESTS_PACKAGE = { name: 'node-tests', version: '1.0.0', private: true, scripts: { test: 'node --test test/' } };
const NODE_TEST_FILES: Record<string, string> = {
  'test/math.test.js': `const test = require('node:test');
const assert = require('node:assert');
test('adds', () => assert.strictEqual(1 + 1, 2));
test('rounds half up', () => assert.strictEqual(Math.round(2.5), 2));
test('later', { skip: 'not yet' }, () => {});
test('someday', { todo: 'needs a design' }, () => {});
test('outer', async (t) => {
  await t.test('inner passes', () => {});
  await t.test('inner fails', () => {
    throw new TypeError('connect with password=hunter2 failed');
  });
});
test('says a lot', () => assert.fail('x'.repeat(10000)));
`,
  'test/calc.test.mjs': `import { describe, it } from 'node:test';
describe('calc', () => {
  describe('nested', () => {
    it('deep', () => {});
  });
});
`,
  'test/broken.test.js': 'const x = ;\n',
  'pass/ok.test.js': "require('node:test')('passes', () => { console.log('fine'); });\n",
};

/** Test output with node's durations (the only part that differs from one run to the next) masked. */
const withoutDurations = (s: string): string => s.replace(/duration_ms:? \d+(\.\d+)?/g, 'duration_ms N').replace(/\(\d+(\.\d+)?ms\)/g, '(N ms)');

const PACKAGE = {
  name: 'tiny-app',
  version: '1.0.0',
  private: true,
  scripts: {
    prebuild: 'node -e "console.log(\'preparing\')"',
    build: 'node -e "console.log(\'built\')"',
    test: 'node test.js',
    all: 'npm run build --silent',
  },
};

describe('npm through buildscope run and NODE_OPTIONS', () => {
  let server: AgentTestServer;
  let dir: string;
  let pkg: string;
  // The passing `npm run build` and the failing `npm test` of tiny-app, compared after both ran.
  let passingBuild = '';
  let failingBuild = '';
  const pages = buildPages();

  beforeAll(async () => {
    expect(existsSync(resolve('dist/cli/main.js')), 'run node scripts/build.js first').toBe(true);
    server = await startAgentTestServer();
    dir = mkdtempSync(join(tmpdir(), 'bs-npm-'));
    pkg = join(dir, 'tiny-app');
    execFileSync('mkdir', ['-p', pkg]);
    writeFileSync(join(pkg, 'package.json'), JSON.stringify(PACKAGE, null, 2));
    writeFileSync(join(pkg, 'test.js'), TEST_JS);
    // A report of an earlier run, older than the command: not its tests.
    mkdirSync(join(pkg, 'reports/old'), { recursive: true });
    writeFileSync(join(pkg, 'reports/old/junit.xml'), '<testsuite name="old"><testcase classname="old" name="stale"/></testsuite>');
    utimesSync(join(pkg, 'reports/old/junit.xml'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: pkg, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', 'commit', '-q', '--allow-empty', '-m', 'start');
  }, 60_000);
  afterAll(async () => {
    await pages.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    // The test's own CI variables must not decide the build's CI tags.
    for (const k of ['CI', 'GITHUB_ACTIONS', 'GITLAB_CI', 'JENKINS_URL', 'BUILDKITE', 'CIRCLECI', 'TF_BUILD', 'TRAVIS', 'NODE_OPTIONS']) delete base[k];
    // Sent before the command returns, so that the build can be read at once; the default outside
    // a CI (spooled, sent by a detached sender) is tested with the spool.
    return { ...base, HOME: dir, BUILDSCOPE_SEND: 'sync', BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: server.accessKey, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool'), ...extra };
  };
  /** The builds a search finds once there are `count` of them (a background sender delivers them after the command). */
  const searchUntil = async (query: string, count: number): Promise<string[]> => {
    let ids: string[] = [];
    await waitFor(async () => (ids = await server.search(query)).length >= count, `${count} builds found by ${query}`, 30_000, 250).catch(() => undefined);
    return ids;
  };
  const buildscopeRun = (args: string[], extra: Record<string, string> = {}) => run(process.execPath, [...CLI, 'run', '--', ...args], { cwd: pkg, env: env(extra) });

  it('records a passing npm run build with its scripts, CI and git values, and passes the output through untouched', async () => {
    const plain = await run('npm', ['run', 'build'], { cwd: pkg, env: env() });
    const r = await buildscopeRun(['npm', 'run', 'build'], {
      GITHUB_ACTIONS: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/tiny-app',
      GITHUB_RUN_ID: '42',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    const link = r.stderr.trim().split('\n').at(-1)!;
    expect(link).toMatch(new RegExp(`^Buildscope: ${server.url}/builds/[0-9a-z]{13}$`));
    const id = link.split('/').at(-1)!;
    passingBuild = id;
    // Listed as soon as the command returns.
    expect(await server.search('buildTool:jsbuild jsbuild.requestedCommands:"run build" buildOutcome:succeeded jsbuild.projectName:tiny-app')).toEqual([id]);
    expect(await server.search('tag:CI value:"CI provider=GitHub Actions" value:"Git branch=main" value:"CI build=https://github.com/acme/tiny-app/actions/runs/42"')).toEqual([id]);
    expect(await server.search('jsbuild.environment.nodeVersion:v* jsbuild.environment.numberOfCpuCores>0 jsbuild.environment.operatingSystem:Linux')).toEqual([id]);
    const events = await server.events(id);
    const tasks = events.filter((e) => e.eventType === 'TaskFinished').map((e) => [e.data['path'], e.data['outcome']]);
    expect(tasks).toEqual([
      ['tiny-app:prebuild', 'success'],
      ['tiny-app:build', 'success'],
    ]);
    // Never environment variables: the CI's are read, not sent.
    expect(JSON.stringify(events)).not.toContain('GITHUB_');
    await pages.check(server, id, { tool: 'npm', outcome: 'succeeded', consoleLines: ['built'] });
  }, 120_000);

  it('records a failing npm test as a verification failure, exits with its status, and redacts on request', async () => {
    const r = await buildscopeRun(['npm', 'test'], { BUILDSCOPE_REDACT: 'user,hostname,ip', BUILDSCOPE_JUNIT: 'reports/**/*.xml' });
    expect(r.status).toBe(3);
    expect(r.stdout).toContain('1 test failed');
    expect(r.stderr).toContain('AssertionError: expected 3 to equal 2');
    const ids = await server.search('buildTool:jsbuild jsbuild.requestedCommands:test buildOutcome:failed hasVerificationFailure tag:LOCAL');
    expect(ids).toHaveLength(1);
    failingBuild = ids[0]!;
    const events = await server.events(ids[0]!);
    expect(events.find((e) => e.eventType === 'BuildAgent')!.data).toEqual({});
    expect(events.at(-1)!.data).toMatchObject({
      outcome: 'failed',
      exitCode: 3,
      failures: [{ classification: 'verification', message: 'Script tiny-app:test exited with 3', cause: { outputTail: expect.stringContaining('AssertionError: expected 3 to equal 2\n') } }],
    });
    // The tests of the report the command wrote (not the older one), and the console it printed.
    const started = new Map(events.filter((e) => e.eventType === 'TestStarted').map((e) => [e.data['id'], e.data]));
    const tests = events.filter((e) => e.eventType === 'TestFinished').map((e) => ({ ...started.get(e.data['id']), ...e.data }));
    expect(tests).toEqual([
      { id: 1, suite: 'price.test.js', name: 'rounds half cents', task: 'npm test', outcome: 'failed', failure: { type: 'AssertionError', message: 'expected 3 to equal 2', stackTrace: 'AssertionError: expected 3 to equal 2\n    at price.test.js:7:12' } },
      { id: 2, suite: 'price.test.js', name: 'adds', task: 'npm test', outcome: 'passed' },
      { id: 3, suite: 'price.test.js', name: 'later', task: 'npm test', outcome: 'skipped', skipReason: 'not yet' },
    ]);
    expect(events.filter((e) => e.eventType === 'TestOutput').map((e) => e.data)).toEqual([{ id: 1, stream: 'stdout', text: 'computing' }]);
    const consoleText = events.filter((e) => e.eventType === 'ConsoleOutput').map((e) => e.data['text']).join('');
    expect(consoleText).toContain('1 test failed\n');
    expect(consoleText).toContain('AssertionError: expected 3 to equal 2\n');
    expect(events.find((e) => e.eventType === 'ServerSettings')!.data).toEqual({ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: true });
    // Its page: the report's failed test and its message, the script that failed and the end of its error output.
    await pages.check(server, failingBuild, {
      tool: 'npm',
      outcome: 'failed',
      failedTests: [{ name: 'price.test.js.rounds half cents', message: 'expected 3 to equal 2' }],
      failed: ['tiny-app:test'],
      causes: ['AssertionError: expected 3 to equal 2'],
      consoleLines: ['1 test failed'],
      screenshot: true,
    });
  }, 120_000);

  it('comparing the passing build with the failing test run names the outcome, the failing script and test, the other command; the other way round swaps each', async () => {
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(passingBuild, failingBuild);
    expect(c.a).toMatchObject({ id: passingBuild, project: 'tiny-app', tool: 'jsbuild', outcome: 'succeeded', ciProvider: 'GitHub Actions', gitBranch: 'main', tasks: 2, tests: 0 });
    expect(c.b).toMatchObject({ id: failingBuild, project: 'tiny-app', tool: 'jsbuild', outcome: 'failed', ciProvider: null, gitBranch: 'main', tasks: 1, tests: 3 });
    // Rules on the builds' durations come after these and depend on the machine's load.
    expect(c.summary.slice(0, 5)).toMatchObject([
      { reason: 'outcome', difference: { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' } },
      { reason: 'failing-task', difference: { kind: 'task-added', task: { path: 'tiny-app:test', outcome: 'failed' } } },
      { reason: 'failing-test', difference: { kind: 'test-added', test: { suite: 'price.test.js', name: 'rounds half cents', outcome: 'failed', attempts: 1 } } },
      { reason: 'failure', difference: { kind: 'failure-added', failure: { classification: 'verification', message: 'Script tiny-app:test exited with 3' } } },
      { reason: 'requested', difference: { kind: 'list', group: 'requested', name: 'requested', added: ['test'], removed: ['run build'] } },
    ]);
    const section = (id: string) => c.sections.find((s) => s.id === id)!.differences;
    expect(section('tasks').map((d) => (d.kind === 'task-added' || d.kind === 'task-removed' ? `${d.kind} ${d.task.path} ${d.task.outcome}` : d.kind))).toEqual([
      'task-removed tiny-app:build executed',
      'task-removed tiny-app:prebuild executed',
      'task-added tiny-app:test failed',
    ]);
    expect(section('tests').map((d) => (d.kind === 'test-added' ? `${d.test.suite} > ${d.test.name} ${d.test.outcome}` : d.kind))).toEqual([
      'price.test.js > adds passed',
      'price.test.js > later skipped',
      'price.test.js > rounds half cents failed',
    ]);
    // What was asked: the command and the CI tag, nothing of the machine (same commit and branch).
    expect(section('asked')).toEqual([
      { kind: 'list', group: 'requested', name: 'requested', added: ['test'], removed: ['run build'] },
      { kind: 'list', group: 'tags', name: 'tags', added: ['LOCAL'], removed: ['CI'] },
    ]);
    // The failing build was run with user and host names redacted.
    expect(section('header').filter((d) => !(d.kind === 'field' && d.name === 'duration'))).toEqual([
      { kind: 'field', group: 'build', name: 'CI provider', before: 'GitHub Actions', after: null },
      { kind: 'field', group: 'build', name: 'host', before: expect.any(String), after: null },
      { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' },
      { kind: 'field', group: 'build', name: 'user', before: expect.any(String), after: null },
      { kind: 'field', group: 'counts', name: 'tasks', before: 2, after: 1 },
      { kind: 'field', group: 'counts', name: 'tasks executed', before: 2, after: 0 },
      { kind: 'field', group: 'counts', name: 'tasks failed', before: 0, after: 1 },
      { kind: 'field', group: 'counts', name: 'tests', before: 0, after: 3 },
      { kind: 'field', group: 'counts', name: 'tests failed', before: 0, after: 1 },
    ]);
    expect(section('failures').map((d) => d.kind)).toEqual(['failure-added']);

    const back = await compare(failingBuild, passingBuild);
    expectSwapped(c, back);
  }, 60_000);

  it('a failing command whose words hold secrets sends none of them, nor its git remote\'s password; a readable agent.properties is warned about', async () => {
    const hostile = gitRemoteCases.cases.find((c) => c.name === 'raw / in the password')!;
    execFileSync('git', ['remote', 'add', 'origin', hostile.remote], { cwd: pkg, stdio: 'ignore' });
    const home = join(dir, 'agent-readable');
    mkdirSync(home);
    writeFileSync(join(home, 'agent.properties'), 'redactValues=Listed_S3cret\n', { mode: 0o644 });
    // npm has no such script: the failure names the command, secrets and all.
    const args = ['npm', 'run', 'no-such-script', '--', '--password=hunter2', 'https://ci:hunter2@repo.example.com/x', 'Listed_S3cret'];
    try {
      const plain = await run('npm', args.slice(1), { cwd: pkg, env: env() });
      const r = await buildscopeRun(args, { BUILDSCOPE_AGENT_DIR: home });
      // The command's own status and output are untouched.
      expect(r.status).toBe(plain.status);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe(plain.stdout);
      expect(r.stderr).toContain(`Buildscope: ${join(home, 'agent.properties')} can be read by other users (mode 0644); it holds an access key: chmod 600 it\n`);
      const id = r.stderr.trim().split('\n').at(-1)!.split('/').at(-1)!;
      const events = await server.events(id);
      const text = JSON.stringify(events);
      for (const secret of ['hunter2', 'Listed_S3cret', 'ss-secret', server.accessKey]) expect(text).not.toContain(secret);
      expect(events.at(-1)!.data['failures']).toEqual([
        { classification: 'non-verification', message: 'npm run no-such-script -- --password=*** https://***@repo.example.com/x *** exited with 1', cause: { outputTail: expect.stringContaining('Missing script: "no-such-script"') } },
      ]);
      expect(events.find((e) => e.eventType === 'UserNamedValue' && e.data['key'] === 'Git repository')!.data['value']).toBe(hostile.sent);
    } finally {
      execFileSync('git', ['remote', 'remove', 'origin'], { cwd: pkg, stdio: 'ignore' });
    }
  }, 120_000);

  describe('node\'s own test runner', () => {
    let nodePkg: string;
    beforeAll(() => {
      nodePkg = join(dir, 'node-tests');
      for (const [file, text] of Object.entries(NODE_TEST_FILES)) {
        mkdirSync(join(nodePkg, file, '..'), { recursive: true });
        writeFileSync(join(nodePkg, file), text);
      }
      writeFileSync(join(nodePkg, 'package.json'), JSON.stringify(NODE_TESTS_PACKAGE, null, 2));
      mkdirSync(join(nodePkg, 'reports'));
    });
    // npm's update notice comes once in a while, whatever the agent does: off, so that two runs compare.
    const inNodePkg = (command: string, args: string[], extra: Record<string, string> = {}) => run(command, args, { cwd: nodePkg, env: env({ npm_config_update_notifier: 'false', ...extra }) });
    /** A build's tests as TestStarted and TestFinished together, by suite and name. */
    const testsOf = async (id: string) => {
      const events = await server.events(id);
      const started = new Map(events.filter((e) => e.eventType === 'TestStarted').map((e) => [e.data['id'], e]));
      const build = events.find((e) => e.eventType === 'BuildStarted')!.timestamp;
      return events
        .filter((e) => e.eventType === 'TestFinished')
        .map((e) => {
          const s = started.get(e.data['id'])!;
          expect(s.timestamp).toBeGreaterThanOrEqual(build);
          expect(e.timestamp).toBeGreaterThanOrEqual(s.timestamp);
          return { ...s.data, ...e.data };
        })
        .sort((a, b) => (`${a['suite']}\0${a['name']}` < `${b['suite']}\0${b['name']}` ? -1 : 1));
    };

    it('records a failing npm test run by node --test, test by test, with the output and exit code the command has without the agent', async () => {
      const plain = await inNodePkg('npm', ['test']);
      const r = await inNodePkg(process.execPath, [...CLI, 'run', '--', 'npm', 'test'], { BUILDSCOPE_TAGS: 'node-test-failing' });
      expect(plain.status).toBe(1);
      expect(r.status).toBe(plain.status);
      expect(withoutDurations(r.stdout)).toBe(withoutDurations(plain.stdout));
      // The agent's own last line (the build's link) is all it adds to the error output.
      const lines = r.stderr.split('\n');
      expect(lines.at(-2)).toMatch(/^Buildscope: /);
      expect(withoutDurations(lines.slice(0, -2).concat('').join('\n'))).toBe(withoutDurations(plain.stderr));
      const [id] = await server.search('tag:node-test-failing buildOutcome:failed');
      const tests = await testsOf(id!);
      const common = { task: 'npm test' };
      expect(tests.map(({ id: _, failure: __, ...t }) => t)).toEqual([
        { ...common, suite: '', name: 'test/broken.test.js', outcome: 'failed' },
        { ...common, suite: 'test/calc.test.mjs > calc > nested', name: 'deep', outcome: 'passed' },
        { ...common, suite: 'test/math.test.js', name: 'adds', outcome: 'passed' },
        { ...common, suite: 'test/math.test.js', name: 'later', outcome: 'skipped', skipReason: 'not yet' },
        { ...common, suite: 'test/math.test.js', name: 'rounds half up', outcome: 'failed' },
        { ...common, suite: 'test/math.test.js', name: 'says a lot', outcome: 'failed' },
        { ...common, suite: 'test/math.test.js', name: 'someday', outcome: 'skipped', skipReason: 'todo: needs a design' },
        { ...common, suite: 'test/math.test.js > outer', name: 'inner fails', outcome: 'failed' },
        { ...common, suite: 'test/math.test.js > outer', name: 'inner passes', outcome: 'passed' },
      ]);
      const failure = (name: string) => tests.find((t) => t['name'] === name)!['failure'] as { type?: string; message: string; stackTrace?: string };
      expect(failure('rounds half up')).toMatchObject({ type: 'AssertionError', message: 'Expected values to be strictly equal:\n\n3 !== 2\n' });
      expect(failure('rounds half up').stackTrace).toContain('math.test.js:4:');
      // Redacted like everything the agent sends, and bounded by the contract (8 KiB per message).
      expect(failure('inner fails')).toMatchObject({ type: 'TypeError', message: 'connect with password=*** failed' });
      expect(JSON.stringify(tests)).not.toContain('hunter2');
      expect(failure('says a lot').message).toBe(`${'x'.repeat(8192)}… (1808 more characters)`);
      expect(failure('test/broken.test.js')).toMatchObject({ type: 'SyntaxError', message: "Unexpected token ';'" });
      expect(await server.search('tag:node-test-failing failedTest:"test/math.test.js > outer.inner fails"')).toEqual([id]);
      // Its page: the file that does not parse, and the failed tests with their messages.
      await pages.check(server, id!, {
        tool: 'npm',
        outcome: 'failed',
        failedTests: [
          { name: 'test/broken.test.js', message: "Unexpected token ';'" },
          { name: 'test/math.test.js.rounds half up', message: 'Expected values to be strictly equal' },
          { name: 'test/math.test.js > outer.inner fails', message: 'connect with password=*** failed' },
        ],
        failed: ['node-tests:test'],
        consoleLines: ["# SyntaxError: Unexpected token ';'", 'broken.test.js:1'],
      });
    }, 120_000);

    it('records a passing node --test run without npm, its JUnit report not read twice, with the output the command has without the agent', async () => {
      const args = ['--test', '--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=junit', '--test-reporter-destination=reports/node.xml', 'pass/'];
      const plain = await inNodePkg(process.execPath, args);
      const r = await inNodePkg(process.execPath, [...CLI, 'run', '--', process.execPath, ...args], { BUILDSCOPE_TAGS: 'node-test-passing', BUILDSCOPE_JUNIT: 'reports/*.xml' });
      expect(plain.status).toBe(0);
      expect(r.status).toBe(0);
      expect(withoutDurations(r.stdout)).toBe(withoutDurations(plain.stdout));
      expect(r.stdout).toContain('fine');
      expect(r.stderr).toMatch(/^Buildscope: \S+\n$/);
      const [id] = await server.search('tag:node-test-passing buildOutcome:succeeded');
      expect(await testsOf(id!)).toEqual([{ id: 1, suite: 'pass/ok.test.js', name: 'passes', task: `${process.execPath} ${args.join(' ')}`, outcome: 'passed' }]);
    }, 120_000);

    it('records node\'s tests in the zero-touch form too, from the same record', async () => {
      const r = await inNodePkg('npm', ['test'], { NODE_OPTIONS: `--require=${PRELOAD}`, BUILDSCOPE_TAGS: 'node-test-zero-touch', BUILDSCOPE_SEND: 'sync' });
      expect(r.status).toBe(1);
      const [id] = await server.search('tag:node-test-zero-touch buildOutcome:failed');
      const tests = await testsOf(id!);
      expect(tests).toHaveLength(9);
      expect(tests.filter((t) => t['outcome'] === 'failed').map((t) => t['name'])).toEqual(['test/broken.test.js', 'rounds half up', 'says a lot', 'inner fails']);
    }, 120_000);
  });

  it('exits 127 with one line when the command does not exist, and records the failed build', async () => {
    const r = await buildscopeRun(['no-such-command-for-buildscope'], { BUILDSCOPE_TAGS: 'missing' });
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('buildscope run: cannot run no-such-command-for-buildscope: command not found');
    expect(await server.search('tag:missing buildOutcome:failed hasNonVerificationFailure')).toHaveLength(1);
  }, 60_000);

  it('outside a CI returns without waiting for the server: spools when it cannot be reached (the build still succeeds), and a detached sender delivers both builds, once each, with the next one', async () => {
    const closedPort = await freePort();
    const down = await buildscopeRun(['npm', 'run', 'build'], { BUILDSCOPE_SEND: '', BUILDSCOPE_SERVER: `http://127.0.0.1:${closedPort}`, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool2'), BUILDSCOPE_TAGS: 'spooled' });
    expect(down.status).toBe(0);
    // Known at once: the server's port was tried while the command ran.
    expect(down.stderr).toMatch(/build not sent \(ECONNREFUSED\); kept in .*spool2, sent with the next build as http:\/\/127\.0\.0\.1:\d+\/builds\/[0-9a-z]{13}\n$/);
    expect(readdirSync(join(dir, 'spool2'))).toHaveLength(1);
    // Private to the user whatever the umask: the directory 0700, the build 0600.
    expect(statSync(join(dir, 'spool2')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'spool2', readdirSync(join(dir, 'spool2'))[0]!)).mode & 0o777).toBe(0o600);
    expect(await server.search('tag:spooled')).toEqual([]);
    const up = await buildscopeRun(['npm', 'run', 'build'], { BUILDSCOPE_SEND: '', BUILDSCOPE_SPOOL_DIR: join(dir, 'spool2'), BUILDSCOPE_TAGS: 'spooled,sent-after' });
    // The command's status and output, and the build's link, as soon as it ends.
    expect(up.status).toBe(0);
    expect(up.stdout).toContain('built');
    const link = up.stderr.trim().split('\n').at(-1)!;
    expect(link).toMatch(new RegExp(`^Buildscope: ${server.url}/builds/[0-9a-z]{13}$`));
    const ids = await searchUntil('tag:spooled', 2);
    expect(ids).toHaveLength(2);
    expect(ids).toContain(link.split('/').at(-1));
    expect(await server.search('tag:sent-after')).toEqual([link.split('/').at(-1)]);
    await waitFor(() => readdirSync(join(dir, 'spool2')).length === 0, 'the spool to be empty', 30_000, 250);
  }, 120_000);

  it('records every npm command of a job with the NODE_OPTIONS that agent npm prints, nested npm runs included', async () => {
    const shown = await run(process.execPath, [...CLI, 'agent', 'npm'], { env: env() });
    expect(shown.status, shown.stderr).toBe(0);
    const nodeOptions = /^export NODE_OPTIONS="(.*)"$/m.exec(shown.stdout)?.[1];
    expect(nodeOptions).toBe(`--require=${PRELOAD}`);
    const r = await run('npm', ['run', 'all'], { cwd: pkg, env: env({ NODE_OPTIONS: nodeOptions!, BUILDSCOPE_TAGS: 'zero-touch' }) });
    expect(r.status, r.stderr).toBe(0);
    const link = /Buildscope: (\S+)/.exec(r.stderr)?.[1];
    expect(link).toMatch(new RegExp(`^${server.url}/builds/[0-9a-z]{13}$`));
    const id = link!.split('/').at(-1)!;
    // Sent by a detached process after npm exited: wait for it.
    let ids: string[] = [];
    await waitFor(async () => (ids = await server.search('tag:zero-touch jsbuild.requestedCommands:"run all"')).length > 0, 'the build sent after npm exited', 15_000, 250).catch(() => undefined);
    expect(ids).toEqual([id]);
    const tasks = (await server.events(id)).filter((e) => e.eventType === 'TaskFinished').map((e) => e.data['path']);
    expect(tasks).toEqual(['tiny-app:all', 'tiny-app:prebuild', 'tiny-app:build']);
    // On a CI machine (which may vanish when the job ends) npm waits for the send: stored on exit.
    const ci = await run('npm', ['run', 'build'], { cwd: pkg, env: env({ NODE_OPTIONS: `--require=${PRELOAD}`, BUILDSCOPE_TAGS: 'zero-touch-ci', GITLAB_CI: 'true', CI_JOB_URL: 'https://gitlab.example.com/acme/tiny-app/-/jobs/7' }) });
    expect(ci.status, ci.stderr).toBe(0);
    expect(await server.search('tag:zero-touch-ci tag:CI value:"CI provider=GitLab CI" jsbuild.requestedCommands:"run build"')).toHaveLength(1);
    // Queries and npx are not builds.
    for (const args of [['--version'], ['config', 'get', 'registry']]) {
      const q = await run('npm', args, { cwd: pkg, env: env({ NODE_OPTIONS: nodeOptions!, BUILDSCOPE_TAGS: 'query', BUILDSCOPE_SEND: 'sync' }) });
      expect(q.status).toBe(0);
      expect(q.stderr).not.toContain('Buildscope:');
    }
    expect(await server.search('tag:query')).toEqual([]);
  }, 120_000);
});
