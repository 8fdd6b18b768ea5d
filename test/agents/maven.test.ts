// The Maven agent end to end: the extension that `buildscope agent maven` compiles with this
// machine's JDK against Debian's Maven (3.8.7) is loaded with -Dmaven.ext.class.path into real
// offline builds of a small Java project, against a real server on loopback. Offline Maven
// resolves its plugins and JUnit from Debian's own repository (/usr/share/maven-repo, used
// read-only as the local repository; the packages are listed in .ci/run and
// docs/send-your-builds.md). Skipped where any of that is missing.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { webPlugin } from '../../src/http/web-plugin.js';
import { bearer, newLocation, startTestServer, type TestServer } from '../support/server.js';
import { cleanEnv, exportedEvents, expectTasksInOrder, finishedTasks, git, has, linkedBuild, ofType, run, search, testsOf } from './jvm-support.js';
import { compareOver, expectSwapped } from './support.js';
import { checkHarnessOutput, gitRemoteCases, harnessLines, redactionCases } from './redaction-tables.js';
import { CLI } from '../support/compiled-cli.js';
import { buildPages } from './build-page.js';

const REPO = '/usr/share/maven-repo';
const PLUGINS = { 'maven-resources-plugin': '3.3.0', 'maven-compiler-plugin': '3.10.1', 'maven-surefire-plugin': '2.22.3' };
const runnable =
  has('mvn', 'javac', 'jar', 'git') &&
  Object.entries(PLUGINS).every(([a, v]) => existsSync(join(REPO, 'org/apache/maven/plugins', a, v))) &&
  existsSync(join(REPO, 'junit/junit/4.x'));
const SECRET = 's3cr3t-in-the-environment';
// What the test scope of the projects below resolves to from Debian's repository: junit:junit:4.x depends on Debian's hamcrest.
const JUNIT_RESOLVED = ['junit:junit:4.x', 'org.hamcrest:hamcrest:debian'];

describe.skipIf(!runnable)('the Maven agent with mvn 3.8', () => {
  let server: TestServer;
  let key: string;
  let auth: string;
  let dir: string;
  let extension: string;
  // Two builds of the module `tiny`, one passing and one with failing tests, compared after both ran.
  let passingBuild = '';
  let failingBuild = '';
  const agentDir = () => join(dir, 'agent');
  const spoolDir = () => join(agentDir(), 'spool');
  const pages = buildPages();
  // Asynchronous: `agent flush` talks to the server that runs in this process.
  const cli = (args: readonly string[], env: Record<string, string> = {}) =>
    run(process.execPath, [...CLI, ...args], process.cwd(), cleanEnv({ BUILDSCOPE_AGENT_DIR: agentDir(), ...env }), undefined, true);

  beforeAll(async () => {
    // With the web pages (dist/web), where the builds' links lead.
    server = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin, sessionPlugin, webPlugin] });
    key = await server.user('ci', ['publishScan', 'accessBuildDataViaApi', 'exportData']);
    auth = bearer(key);
    dir = mkdtempSync(join(tmpdir(), 'agent-maven-'));
    const built = await cli(['agent', 'maven']);
    expect(built.code, built.err).toBe(0);
    expect(built.out).toMatch(/^-Dmaven\.ext\.class\.path=\S+\.jar\n$/);
    extension = built.out.trim();
  }, 180_000);

  afterAll(async () => {
    await pages.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function project(name: string, failingTest = false, sources: Record<string, string> = {}, artifactId = name): string {
    const p = join(dir, name);
    mkdirSync(join(p, 'src/main/java/demo'), { recursive: true });
    mkdirSync(join(p, 'src/test/java/demo'), { recursive: true });
    const plugins = Object.entries(PLUGINS)
      .map(([a, v]) => `<plugin><artifactId>${a}</artifactId><version>${v}</version></plugin>`)
      .join('');
    writeFileSync(
      join(p, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>demo</groupId><artifactId>${artifactId}</artifactId><version>1.0</version>
<properties><maven.compiler.source>11</maven.compiler.source><maven.compiler.target>11</maven.compiler.target><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
<dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.x</version><scope>test</scope></dependency></dependencies>
<build><plugins>${plugins}</plugins></build></project>
`,
    );
    writeFileSync(join(p, '.gitignore'), 'target/\n');
    writeFileSync(join(p, 'src/main/java/demo/Hello.java'), 'package demo;\npublic class Hello { public static int two() { return 2; } }\n');
    writeFileSync(
      join(p, 'src/test/java/demo/HelloTest.java'),
      `package demo;\npublic class HelloTest { @org.junit.Test public void two() { org.junit.Assert.assertEquals(${failingTest ? 3 : 2}, Hello.two()); } }\n`,
    );
    for (const [file, text] of Object.entries(sources)) writeFileSync(join(p, file), text);
    return p;
  }

  function mvn(p: string, args: readonly string[], env: Record<string, string> = {}, onSpawn?: () => void) {
    return run(
      'mvn',
      ['-B', '-o', `-Dmaven.repo.local=${REPO}`, extension, ...args],
      p,
      cleanEnv({ BUILDSCOPE_AGENT_DIR: agentDir(), BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key, MY_SECRET: SECRET, ...env }),
      onSpawn,
    );
  }

  it('a passing -o -T 2 build on CI is spooled when its server stops during the build; agent flush delivers it once', async () => {
    const p = project('tiny');
    git(p, 'init');
    git(p, 'add', '.');
    git(p, 'commit', '-qm', 'first');
    const other = await startTestServer(await newLocation('sqlite'));
    const r = await mvn(p, ['-T', '2', '-Dbuildscope.tags=nightly', 'test'], { BUILDSCOPE_SERVER: other.url, JENKINS_URL: 'https://ci.example.com/', BUILD_URL: 'https://ci.example.com/job/tiny/7/', BUILDSCOPE_TAGS: 'from-env', BUILDSCOPE_VALUES: 'Stage=qa' }, () => void other.close());
    expect(r.code, r.out).toBe(0);
    const id = linkedBuild(r.out, other.url);
    passingBuild = id;
    expect(r.out).toContain('could not be sent');
    expect(readdirSync(spoolDir())).toEqual([`${id}.ndjson`]);
    // Private to the user whatever the umask: the directory 0700, the build 0600.
    expect(statSync(spoolDir()).mode & 0o777).toBe(0o700);
    expect(statSync(join(spoolDir(), `${id}.ndjson`)).mode & 0o777).toBe(0o600);

    const flushed = await cli(['agent', 'flush'], { BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key });
    expect(flushed.code, flushed.err).toBe(0);
    expect(flushed.out).toBe(`${server.url}/builds/${id}\n`);
    expect(flushed.err).toContain('1 sent, 0 rejected, 0 still spooled');
    const again = await cli(['agent', 'flush'], { BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key });
    expect(again.code).toBe(0);
    expect(again.err).toContain('No spooled builds');

    expect(await search(server, auth, 'buildTool:jvmbuild jvmbuild.requestedGoals:test')).toEqual([id]);
    expect(await search(server, auth, 'jvmbuild.buildOptions.offlineModeEnabled jvmbuild.buildOptions.maxNumberOfThreads:2 jvmbuild.buildOptions.batchModeEnabled')).toEqual([id]);
    expect(await search(server, auth, 'tag:CI tag:nightly value:"CI provider=Jenkins" value:"CI build=https://ci.example.com/job/tiny/7/" value:"Stage=qa"')).toEqual([id]);
    // The system property's tags over the environment's (agent-contract.json, conformance-cases.json).
    expect(await search(server, auth, 'tag:from-env')).toEqual([]);
    expect(await search(server, auth, 'value:"Git branch=main" value:"Git status=clean" project:tiny buildToolVersion:3.8.7')).toEqual([id]);

    const { events, raw } = await exportedEvents(server, auth, id);
    expectTasksInOrder(events);
    expect(finishedTasks(events).map((t) => `${t.path} ${t.outcome}`)).toEqual([
      'tiny:maven-resources-plugin:resources@default-resources success',
      'tiny:maven-compiler-plugin:compile@default-compile success',
      'tiny:maven-resources-plugin:testResources@default-testResources success',
      'tiny:maven-compiler-plugin:testCompile@default-testCompile success',
      'tiny:maven-surefire-plugin:test@default-test success',
    ]);
    for (const type of ['BuildStarted', 'BuildAgent', 'ProjectStructure', 'BuildRequestedTasks', 'Environment', 'BuildOptions', 'BuildFinished']) expect(ofType(events, type), type).toHaveLength(1);
    // Surefire had the test scope resolved (JUnit and what it brings); no other scope has anything.
    // Sent when the project finished: after its last goal, before the build's end.
    const resolved = ofType(events, 'ResolvedDependencies');
    expect(resolved.map((e) => e.data)).toEqual([{ project: 'demo:tiny', configuration: 'test', dependencies: JUNIT_RESOLVED }]);
    expect(resolved[0]!.timestamp).toBeGreaterThanOrEqual(Math.max(...ofType(events, 'TaskFinished').map((e) => e.timestamp)));
    expect(resolved[0]!.timestamp).toBeLessThanOrEqual(ofType(events, 'BuildFinished')[0]!.timestamp);
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(SECRET);
  }, 300_000);

  it('--install puts the extension into ${maven.home}/lib/ext, where a plain mvn loads it', async () => {
    // A copy of the Maven installation (links resolved: Debian's are relative), so that the machine's own stays as it is.
    const home = join(dir, 'maven-home');
    cpSync('/usr/share/maven', home, { recursive: true, dereference: true });
    const installed = await cli(['agent', 'maven', '--install', '--maven-home', home]);
    expect(installed.code, installed.err).toBe(0);
    expect(installed.err).toContain(`Installed ${join(home, 'lib', 'ext', 'buildscope-maven.jar')}`);
    expect(existsSync(join(home, 'lib', 'ext', 'buildscope-maven.jar'))).toBe(true);
    // A pom-packaged project's validate phase runs no plugin: the extension alone makes the build.
    const p = join(dir, 'aggregator');
    mkdirSync(p);
    writeFileSync(join(p, 'pom.xml'), '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>demo</groupId><artifactId>aggregator</artifactId><version>1.0</version><packaging>pom</packaging></project>\n');
    const r = await run(join(home, 'bin', 'mvn'), ['-B', '-o', '-q', 'validate'], p, cleanEnv({ BUILDSCOPE_AGENT_DIR: agentDir(), BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key, MAVEN_HOME: home }));
    expect(r.code, r.out).toBe(0);
    const id = linkedBuild(r.out, server.url);
    expect(await search(server, auth, 'project:aggregator jvmbuild.requestedGoals:validate jvmbuild.buildOptions.quietEnabled')).toEqual([id]);
  }, 300_000);

  it('the shared git remote and redaction tables give the same results through the extension\'s own rules', async () => {
    const jar = extension.slice('-Dmaven.ext.class.path='.length);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('java', ['-cp', jar, 'test/agents/fixtures/jvm/RedactionCases.java', ...redactionCases.listed], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`java exited with ${code}`))));
      child.stdin.end(harnessLines());
    });
    checkHarnessOutput(output, expect);
  }, 120_000);

  it('a build whose failure holds secrets sends none of them, nor its git remote\'s password; a readable agent.properties is warned about', async () => {
    const p = project('leaky');
    // Maven's own failure names the phase it does not know: a GitHub-token-shaped word and a value the user listed.
    const phase = 'Listed_S3cret-ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const hostile = gitRemoteCases.cases.find((c) => c.name === 'raw / and @ in the password')!;
    git(p, 'init');
    git(p, 'remote', 'add', 'origin', hostile.remote);
    const home = join(dir, 'agent-readable');
    mkdirSync(home);
    writeFileSync(join(home, 'agent.properties'), 'redactValues=Listed_S3cret\n', { mode: 0o644 });
    const plain = await run('mvn', ['-B', '-o', '-q', `-Dmaven.repo.local=${REPO}`, phase], p, cleanEnv({}));
    const r = await mvn(p, ['-q', phase], { BUILDSCOPE_AGENT_DIR: home });
    // Maven's own status and words are untouched.
    expect(r.code).toBe(plain.code);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`Unknown lifecycle phase "${phase}"`);
    expect(r.out).toContain(`Buildscope: ${join(home, 'agent.properties')} can be read by other users (mode 0644); it holds an access key: chmod 600 it`);
    const id = linkedBuild(r.out, server.url);
    const { events, raw } = await exportedEvents(server, auth, id);
    const finished = ofType(events, 'BuildFinished')[0]!.data as { failures: { message: string }[] };
    expect(finished.failures[0]!.message).toContain('Unknown lifecycle phase "***-ghp_***"');
    for (const secret of ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'Listed_S3cret', 'ss-secret', key]) expect(raw).not.toContain(secret);
    const values = Object.fromEntries(ofType(events, 'UserNamedValue').map((e) => [e.data['key'], e.data['value']]));
    expect(values['Git repository']).toBe(hostile.sent);
  }, 300_000);

  it('a failing test is a verification failure, listed as soon as Maven exits; each test and retry from Surefire\'s reports', async () => {
    // Beside the failing HelloTest: a passing test, a failing one that prints, one that fails on its
    // first run only (Surefire reruns it) and an ignored one.
    const more = `package demo;
import org.junit.*;
public class MoreTest {
  static int runs = 0;
  @Test public void passes() { System.out.println("hello from passes"); }
  @Test public void fails() {
    System.err.println("about to fail");
    Assert.assertEquals("prices round half cents", 3, Hello.two());
  }
  @Test public void flaky() { if (runs++ == 0) Assert.fail("first run fails"); }
  @Ignore("not yet") @Test public void later() {}
}
`;
    // The module of the passing build (Maven's goal paths carry the artifactId), so that the two compare goal by goal.
    const p = project('failing', true, { 'src/test/java/demo/MoreTest.java': more }, 'tiny');
    // A report of an earlier build, older than this one: not this build's tests.
    mkdirSync(join(p, 'target/surefire-reports'), { recursive: true });
    writeFileSync(join(p, 'target/surefire-reports/TEST-demo.OldTest.xml'), '<testsuite name="demo.OldTest"><testcase name="old" classname="demo.OldTest" time="0"/></testsuite>');
    utimesSync(join(p, 'target/surefire-reports/TEST-demo.OldTest.xml'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const r = await mvn(p, ['-Dbuildscope.redact=username,hostname,ipAddresses', '-Dsurefire.rerunFailingTestsCount=1', 'test']);
    expect(r.code).not.toBe(0);
    const id = linkedBuild(r.out, server.url);
    failingBuild = id;
    expect(await search(server, auth, 'buildOutcome:failed hasVerificationFailure !hasNonVerificationFailure')).toEqual([id]);
    expect(await search(server, auth, 'tag:LOCAL project:tiny')).toEqual([id]);
    const { events } = await exportedEvents(server, auth, id);
    expectTasksInOrder(events);
    expect(finishedTasks(events).at(-1)).toEqual({ path: 'tiny:maven-surefire-plugin:test@default-test', outcome: 'failed', cacheable: false });
    const finished = ofType(events, 'BuildFinished')[0]!.data as { outcome: string; failures: { classification: string; message: string }[] };
    expect(finished).toEqual({
      outcome: 'failed',
      failures: [{ classification: 'verification', message: expect.stringContaining('There are test failures'), cause: expect.objectContaining({ type: 'org.apache.maven.plugin.MojoFailureException' }) }],
    });
    // Said once, by the mojo (Maven's wrapper repeats it).
    expect(finished.failures[0]!.message.split('There are test failures')).toHaveLength(2);
    expect(finished.failures[0]!.message).toMatch(/^Mojo tiny:maven-surefire-plugin:test@default-test failed: There are test failures/);
    // A failed project says what it had resolved as a passing one does.
    expect(ofType(events, 'ResolvedDependencies').map((e) => e.data)).toEqual([{ project: 'demo:tiny', configuration: 'test', dependencies: JUNIT_RESOLVED }]);

    const task = 'tiny:maven-surefire-plugin:test@default-test';
    const tests = testsOf(events);
    expect(tests.map((t) => `${t.suite}.${t.name} ${t.outcome} ${t.attempt ?? ''}`).sort()).toEqual([
      'demo.HelloTest.two failed 1',
      'demo.HelloTest.two failed 2',
      'demo.MoreTest.fails failed 1',
      'demo.MoreTest.fails failed 2',
      'demo.MoreTest.flaky failed 1',
      'demo.MoreTest.flaky passed 2',
      'demo.MoreTest.later skipped ',
      'demo.MoreTest.passes passed ',
    ]);
    for (const t of tests) expect(t.task).toBe(task);
    const fails = tests.find((t) => t.name === 'fails' && t.attempt === 1)!;
    expect(fails.failure).toMatchObject({ type: 'java.lang.AssertionError', message: 'prices round half cents expected:<3> but was:<2>' });
    expect(fails.failure!.stackTrace).toMatch(/^java\.lang\.AssertionError: prices round half cents expected:<3> but was:<2>\n\tat demo\.MoreTest\.fails\(MoreTest\.java:8\)/);
    expect(fails.output).toEqual({ stderr: 'about to fail\n' });
    expect(tests.find((t) => t.name === 'flaky' && t.attempt === 1)!.failure).toMatchObject({ type: 'java.lang.AssertionError', message: 'first run fails' });
    expect(tests.find((t) => t.name === 'later')!.skipReason).toBe('not yet');
    // The console: Maven's own lines as it printed them (the reactor, Surefire's results, the
    // outcome), each a line of what the terminal got; Maven's error report after the build is not in it.
    const console = ofType(events, 'ConsoleOutput').map((e) => e.data as { stream: string; text: string });
    const text = console.map((c) => c.text).join('');
    expect(text).toContain('[INFO] Building tiny');
    expect(text).toMatch(/Tests run: \d+, Failures: \d+/);
    expect(text).toContain('[INFO] BUILD FAILURE');
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) expect(r.out).toContain(line);
    expect(ofType(events, 'ServerSettings').map((e) => e.data)).toEqual([{ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: true }]);
    // The JVM agents' older words are aliases of user, hostname and ip (agent-contract.json): every field left out.
    expect(ofType(events, 'BuildAgent')[0]!.data).toEqual({});

    // The pages: the failed tests, their assertions and the failed goal; the passing build passed.
    await pages.check({ url: server.url, accessKey: key }, id, {
      tool: 'maven',
      outcome: 'failed',
      failedTests: [
        { name: 'demo.MoreTest.fails', message: 'prices round half cents expected:<3> but was:<2>' },
        { name: 'demo.HelloTest.two', message: 'expected:<3> but was:<2>' },
      ],
      failed: [task],
      causes: ['There are test failures'],
      consoleLines: ['[INFO] BUILD FAILURE'],
      screenshot: true,
    });
    await pages.check({ url: server.url, accessKey: key }, passingBuild, { tool: 'maven', outcome: 'succeeded', consoleLines: ['[INFO] BUILD SUCCESS'] });
  }, 300_000);

  it('comparing the passing build with the failing one names the outcome, the failing goal, the newly failing tests and what was asked differently; the other way round swaps each', async () => {
    const compare = (a: string, b: string) => compareOver((path) => server.get(path, auth), a, b);
    const c = await compare(passingBuild, failingBuild);
    expect(c.a).toMatchObject({ id: passingBuild, project: 'tiny', outcome: 'succeeded', tasks: 5, tests: 1 });
    expect(c.b).toMatchObject({ id: failingBuild, project: 'tiny', outcome: 'failed', tasks: 5, tests: 5 });
    const surefire = 'tiny:maven-surefire-plugin:test@default-test';
    // Outcome, goal, tests, failure, then git (the failing build's directory is no repository);
    // rules on the builds' durations come after these and depend on the machine's load.
    expect(c.summary.slice(0, 8)).toMatchObject([
      { reason: 'outcome', difference: { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' } },
      { reason: 'failing-task', difference: { kind: 'task-outcome', path: surefire, occurrence: 1, before: 'executed', after: 'failed' } },
      { reason: 'failing-test', difference: { kind: 'test-added', test: { suite: 'demo.MoreTest', name: 'fails', outcome: 'failed', attempts: 2 } } },
      { reason: 'failing-test', difference: { kind: 'test-outcome', suite: 'demo.HelloTest', name: 'two', before: 'passed', after: 'failed' } },
      { reason: 'failure', difference: { kind: 'failure-added', failure: { classification: 'verification', message: expect.stringMatching(`^Mojo ${surefire} failed: There are test failures`) } } },
      { reason: 'git', difference: { kind: 'field', group: 'git', name: 'branch', before: 'main', after: null } },
      { reason: 'git', difference: { kind: 'field', group: 'git', name: 'commit', before: expect.stringMatching(/^[0-9a-f]{40}$/), after: null } },
      { reason: 'git', difference: { kind: 'field', group: 'git', name: 'status', before: 'clean', after: null } },
    ]);
    const section = (id: string) => c.sections.find((s) => s.id === id)!.differences;
    const timed = new Set(['task-duration', 'test-duration']);
    // Goal by goal, only the tests' mojo ended otherwise; every other goal ran in both.
    expect(section('tasks').filter((d) => !timed.has(d.kind))).toEqual([{ kind: 'task-outcome', path: surefire, occurrence: 1, before: 'executed', after: 'failed' }]);
    expect(section('tests').filter((d) => !timed.has(d.kind))).toMatchObject([
      { kind: 'test-added', test: { suite: 'demo.MoreTest', name: 'fails', outcome: 'failed' } },
      { kind: 'test-added', test: { suite: 'demo.MoreTest', name: 'flaky', outcome: 'passed', attempts: 2 } },
      { kind: 'test-added', test: { suite: 'demo.MoreTest', name: 'later', outcome: 'skipped' } },
      { kind: 'test-added', test: { suite: 'demo.MoreTest', name: 'passes', outcome: 'passed' } },
      { kind: 'test-outcome', suite: 'demo.HelloTest', name: 'two', before: 'passed', after: 'failed' },
    ]);
    // What was asked differs by what the two command lines and environments said, and nothing else:
    // the same goal, -T 2 against one thread, CI against a local build, git against none.
    expect(section('asked')).toEqual([
      { kind: 'list', group: 'tags', name: 'tags', added: ['LOCAL'], removed: ['CI', 'nightly'] },
      { kind: 'field', group: 'git', name: 'branch', before: 'main', after: null },
      { kind: 'field', group: 'git', name: 'commit', before: expect.stringMatching(/^[0-9a-f]{40}$/), after: null },
      { kind: 'field', group: 'git', name: 'status', before: 'clean', after: null },
      { kind: 'field', group: 'options', name: 'maxNumberOfThreads', before: 2, after: 1 },
      { kind: 'field', group: 'values', name: 'Stage', before: 'qa', after: null },
    ]);
    // The failing build was run with user and host names redacted.
    expect(section('header').filter((d) => !(d.kind === 'field' && d.name === 'duration'))).toEqual([
      { kind: 'field', group: 'build', name: 'CI provider', before: 'Jenkins', after: null },
      { kind: 'field', group: 'build', name: 'host', before: expect.any(String), after: null },
      { kind: 'field', group: 'build', name: 'outcome', before: 'succeeded', after: 'failed' },
      { kind: 'field', group: 'build', name: 'user', before: expect.any(String), after: null },
      { kind: 'field', group: 'counts', name: 'tasks executed', before: 5, after: 4 },
      { kind: 'field', group: 'counts', name: 'tasks failed', before: 0, after: 1 },
      { kind: 'field', group: 'counts', name: 'tests', before: 1, after: 5 },
      { kind: 'field', group: 'counts', name: 'tests failed', before: 0, after: 2 },
    ]);
    expect(section('failures')).toMatchObject([{ kind: 'failure-added' }]);

    const back = await compare(failingBuild, passingBuild);
    expect(back.identical).toBe(false);
    expectSwapped(c, back);
  }, 60_000);

  it('a compile error is a failure whose cause holds the compiler\'s errors', async () => {
    const p = project('uncompiled', false, { 'src/main/java/demo/Broken.java': 'package demo;\npublic class Broken { int x = missing; }\n' });
    const r = await mvn(p, ['-q', 'compile']);
    expect(r.code).not.toBe(0);
    const id = linkedBuild(r.out, server.url);
    const { events } = await exportedEvents(server, auth, id);
    const finished = ofType(events, 'BuildFinished')[0]!.data as { failures: { classification: string; message: string; cause: Record<string, unknown> }[] };
    expect(finished.failures).toHaveLength(1);
    expect(finished.failures[0]!.classification).toBe('non-verification');
    expect(finished.failures[0]!.cause['diagnostics']).toEqual([{ file: 'src/main/java/demo/Broken.java', line: 2, column: 31, severity: 'error', message: 'cannot find symbol' }]);
    expect(finished.failures[0]!.cause['stackTrace']).toMatch(/^org\.apache\.maven\.plugin\.compiler\.CompilationFailureException: Compilation failure/);
    // `compile` had only the compile scope resolved, where this project has nothing (JUnit is a test dependency): nothing is sent.
    expect(ofType(events, 'ResolvedDependencies')).toEqual([]);
    // The page: the compiler's error where it is, and the failed goal.
    await pages.check({ url: server.url, accessKey: key }, id, {
      tool: 'maven',
      outcome: 'failed',
      diagnostics: [{ file: 'src/main/java/demo/Broken.java', line: 2 }],
      failed: ['uncompiled:maven-compiler-plugin:compile@default-compile'],
      causes: ['cannot find symbol'],
      consoleLines: ['cannot find symbol'],
    });
  }, 300_000);

  // Last: its two builds of `deps` are no concern of the searches above.
  it('two builds that resolved their dependencies differently: each lists what it resolved by scope, and the comparison names each module whose version differs', async () => {
    const before = project('deps-before', false, {}, 'deps');
    const after = project('deps-after', false, {}, 'deps');
    // The second asks for JUnit by its upstream version and adds a test dependency: Maven's own
    // commons-lang3 (Debian's maven needs libcommons-lang3-java, so the repository has it wherever mvn is).
    const pom = join(after, 'pom.xml');
    writeFileSync(
      pom,
      readFileSync(pom, 'utf8')
        .replace('<version>4.x</version>', '<version>4.13.2</version>')
        .replace('<dependencies>', '<dependencies><dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId><version>3.12.0</version><scope>test</scope></dependency>'),
    );
    const ids: string[] = [];
    for (const p of [before, after]) {
      const r = await mvn(p, ['-q', 'test-compile']);
      expect(r.code, r.out).toBe(0);
      ids.push(linkedBuild(r.out, server.url));
    }
    const [a, b] = ids as [string, string];
    const resolved = async (id: string) => ofType((await exportedEvents(server, auth, id)).events, 'ResolvedDependencies').map((e) => e.data);
    expect(await resolved(a)).toEqual([{ project: 'demo:deps', configuration: 'test', dependencies: JUNIT_RESOLVED }]);
    expect(await resolved(b)).toEqual([{ project: 'demo:deps', configuration: 'test', dependencies: ['junit:junit:4.13.2', 'org.apache.commons:commons-lang3:3.12.0', 'org.hamcrest:hamcrest:debian'] }]);

    const compare = (x: string, y: string) => compareOver((path) => server.get(path, auth), x, y);
    const changed = { kind: 'dependency', project: 'demo:deps', configuration: 'test', module: 'junit:junit', before: '4.x', after: '4.13.2' };
    const added = { kind: 'dependency', project: 'demo:deps', configuration: 'test', module: 'org.apache.commons:commons-lang3', before: null, after: '3.12.0' };
    const byModule = (x: object, y: object) => String('module' in x ? x.module : '').localeCompare(String('module' in y ? y.module : ''));
    for (const [c, expected] of [
      [await compare(a, b), [changed, added]],
      [await compare(b, a), [{ ...changed, before: '4.13.2', after: '4.x' }, { ...added, before: '3.12.0', after: null }]],
    ] as const) {
      const section = c.sections.find((s) => s.id === 'dependencies');
      expect(section, JSON.stringify(c.sections.map((s) => s.id))).toBeDefined();
      expect([...section!.differences].sort(byModule)).toEqual([...expected].sort(byModule));
      const named = c.summary.filter((e) => e.reason === 'dependency');
      expect(named.length).toBeGreaterThan(0);
      for (const e of named) expect(expected).toContainEqual(e.difference);
    }
  }, 300_000);
});
