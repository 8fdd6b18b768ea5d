// The Maven agent end to end: the extension that `buildscope agent maven` compiles with this
// machine's JDK against Debian's Maven (3.8.7) is loaded with -Dmaven.ext.class.path into real
// offline builds of a small Java project, against a real server on loopback. Offline Maven
// resolves its plugins and JUnit from Debian's own repository (/usr/share/maven-repo, used
// read-only as the local repository; the packages are listed in .ci/run and
// docs/send-your-builds.md). Skipped where any of that is missing.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { bearer, newLocation, startTestServer, type TestServer } from '../server/support.js';
import { cleanEnv, exportedEvents, expectTasksInOrder, finishedTasks, git, has, linkedBuild, ofType, run, search, testsOf } from './jvm-support.js';
import { checkHarnessOutput, gitRemoteCases, harnessLines, redactionCases } from './redaction-tables.js';

const REPO = '/usr/share/maven-repo';
const PLUGINS = { 'maven-resources-plugin': '3.3.0', 'maven-compiler-plugin': '3.10.1', 'maven-surefire-plugin': '2.22.3' };
const runnable =
  has('mvn', 'javac', 'jar', 'git') &&
  Object.entries(PLUGINS).every(([a, v]) => existsSync(join(REPO, 'org/apache/maven/plugins', a, v))) &&
  existsSync(join(REPO, 'junit/junit/4.x'));
const SECRET = 's3cr3t-in-the-environment';

describe.skipIf(!runnable)('the Maven agent with mvn 3.8', () => {
  let server: TestServer;
  let key: string;
  let auth: string;
  let dir: string;
  let extension: string;
  const agentDir = () => join(dir, 'agent');
  const spoolDir = () => join(agentDir(), 'spool');
  // Asynchronous: `agent flush` talks to the server that runs in this process.
  const cli = (args: readonly string[], env: Record<string, string> = {}) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/run.ts', ...args], process.cwd(), cleanEnv({ BUILDSCOPE_AGENT_DIR: agentDir(), ...env }), undefined, true);

  beforeAll(async () => {
    server = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin] });
    key = await server.user('ci', ['publishScan', 'accessBuildDataViaApi', 'exportData']);
    auth = bearer(key);
    dir = mkdtempSync(join(tmpdir(), 'agent-maven-'));
    const built = await cli(['agent', 'maven']);
    expect(built.code, built.err).toBe(0);
    expect(built.out).toMatch(/^-Dmaven\.ext\.class\.path=\S+\.jar\n$/);
    extension = built.out.trim();
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function project(name: string, failingTest = false, sources: Record<string, string> = {}): string {
    const p = join(dir, name);
    mkdirSync(join(p, 'src/main/java/demo'), { recursive: true });
    mkdirSync(join(p, 'src/test/java/demo'), { recursive: true });
    const plugins = Object.entries(PLUGINS)
      .map(([a, v]) => `<plugin><artifactId>${a}</artifactId><version>${v}</version></plugin>`)
      .join('');
    writeFileSync(
      join(p, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>demo</groupId><artifactId>${name}</artifactId><version>1.0</version>
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
    const p = project('failing', true, { 'src/test/java/demo/MoreTest.java': more });
    // A report of an earlier build, older than this one: not this build's tests.
    mkdirSync(join(p, 'target/surefire-reports'), { recursive: true });
    writeFileSync(join(p, 'target/surefire-reports/TEST-demo.OldTest.xml'), '<testsuite name="demo.OldTest"><testcase name="old" classname="demo.OldTest" time="0"/></testsuite>');
    utimesSync(join(p, 'target/surefire-reports/TEST-demo.OldTest.xml'), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const r = await mvn(p, ['-Dbuildscope.redact=username,hostname,ipAddresses', '-Dsurefire.rerunFailingTestsCount=1', 'test']);
    expect(r.code).not.toBe(0);
    const id = linkedBuild(r.out, server.url);
    expect(await search(server, auth, 'buildOutcome:failed hasVerificationFailure !hasNonVerificationFailure')).toEqual([id]);
    expect(await search(server, auth, 'tag:LOCAL project:failing')).toEqual([id]);
    const { events } = await exportedEvents(server, auth, id);
    expectTasksInOrder(events);
    expect(finishedTasks(events).at(-1)).toEqual({ path: 'failing:maven-surefire-plugin:test@default-test', outcome: 'failed', cacheable: false });
    const finished = ofType(events, 'BuildFinished')[0]!.data as { outcome: string; failures: { classification: string; message: string }[] };
    expect(finished).toEqual({
      outcome: 'failed',
      failures: [{ classification: 'verification', message: expect.stringContaining('There are test failures'), cause: expect.objectContaining({ type: 'org.apache.maven.plugin.MojoFailureException' }) }],
    });
    // Said once, by the mojo (Maven's wrapper repeats it).
    expect(finished.failures[0]!.message.split('There are test failures')).toHaveLength(2);
    expect(finished.failures[0]!.message).toMatch(/^Mojo failing:maven-surefire-plugin:test@default-test failed: There are test failures/);

    const task = 'failing:maven-surefire-plugin:test@default-test';
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
    expect(text).toContain('[INFO] Building failing');
    expect(text).toMatch(/Tests run: \d+, Failures: \d+/);
    expect(text).toContain('[INFO] BUILD FAILURE');
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) expect(r.out).toContain(line);
    expect(ofType(events, 'ServerSettings').map((e) => e.data)).toEqual([{ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: true }]);
    // The JVM agents' older words are aliases of user, hostname and ip (agent-contract.json): every field left out.
    expect(ofType(events, 'BuildAgent')[0]!.data).toEqual({});
  }, 300_000);

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
  }, 300_000);
});
