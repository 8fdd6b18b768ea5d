// The Gradle agent end to end: Debian's gradle (4.4.1) runs small real Java projects with the init
// script that `buildscope agent gradle` prints, against a real server on loopback (and
// Buildscope's own cache node for the build cache case). Each Gradle run is daemon-free but the
// build cache case's last two, which share one daemon (stopped at the case's end); the spool case
// stops its server while the build runs. Skipped where gradle or java is missing
// (docs/send-your-builds.md says which versions ran).

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, newLocation, startTestServer, type TestServer } from '../support/server.js';
import { fastHash, startTestNode } from '../cache-node/helpers.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { sessionPlugin } from '../../src/http/session-plugin.js';
import { webPlugin } from '../../src/http/web-plugin.js';
import type { Comparison } from '../../src/services/compare.js';
import { cleanEnv, exportedEvents, expectTasksInOrder, finishedTasks, git, has, linkedBuild, ofType, run, search, testsOf } from './jvm-support.js';
import { compareOver } from './support.js';
import { checkHarnessOutput, gitRemoteCases, harnessLines, redactionCases } from './redaction-tables.js';
import { CLI } from '../support/compiled-cli.js';
import { buildPages } from './build-page.js';

const JUNIT = ['/usr/share/java/junit4.jar', '/usr/share/java/hamcrest-core.jar'];
const runnable = has('gradle', 'java', 'git') && JUNIT.every((f) => existsSync(f));
const SECRET = 's3cr3t-in-the-environment';

describe.skipIf(!runnable)('the Gradle agent with gradle 4.4', () => {
  let server: TestServer;
  let key: string;
  let auth: string;
  let dir: string;
  let script: string;
  const agentDir = () => join(dir, 'agent');
  const spoolDir = () => join(agentDir(), 'spool');
  const pages = buildPages();

  beforeAll(async () => {
    // With the web pages (dist/web), where the builds' links lead.
    server = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin, sessionPlugin, webPlugin] });
    key = await server.user('ci', ['publishScan', 'accessBuildDataViaApi', 'exportData']);
    auth = bearer(key);
    dir = mkdtempSync(join(tmpdir(), 'agent-gradle-'));
    // The script as a user gets it: printed by the command, with this server as its default.
    const printed = spawnSync(process.execPath, [...CLI, 'agent', 'gradle', '--server', `${server.url}/`], { encoding: 'utf8' });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(`DEFAULT_SERVER = '${server.url}'`);
    expect(printed.stdout).not.toContain('@AGENT_VERSION@');
    expect(printed.stdout).not.toContain('@REDACTION_');
    script = join(dir, 'buildscope.gradle');
    writeFileSync(script, printed.stdout);
  }, 120_000);

  afterAll(async () => {
    await pages.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A Java project with one JUnit 4 test (Debian's jars: nothing to download). */
  function project(name: string, options: { failingTest?: boolean; script?: string; settings?: string; sources?: Record<string, string> } = {}): string {
    const p = join(dir, name);
    mkdirSync(join(p, 'src/main/java/demo'), { recursive: true });
    mkdirSync(join(p, 'src/test/java/demo'), { recursive: true });
    writeFileSync(join(p, 'settings.gradle'), `rootProject.name = '${name}'\n${options.settings ?? ''}`);
    writeFileSync(
      join(p, 'build.gradle'),
      `apply plugin: 'java'\ndependencies { testCompile files(${JUNIT.map((j) => `'${j}'`).join(', ')}) }\n${options.script ?? ''}`,
    );
    writeFileSync(join(p, 'src/main/java/demo/Hello.java'), 'package demo;\npublic class Hello { public static int two() { return 2; } }\n');
    writeFileSync(
      join(p, 'src/test/java/demo/HelloTest.java'),
      `package demo;\npublic class HelloTest { @org.junit.Test public void two() { org.junit.Assert.assertEquals(${options.failingTest ? 3 : 2}, Hello.two()); } }\n`,
    );
    for (const [file, text] of Object.entries(options.sources ?? {})) writeFileSync(join(p, file), text);
    return p;
  }

  function gradle(p: string, args: readonly string[], env: Record<string, string> = {}, onSpawn?: () => void) {
    return run(
      'gradle',
      ['--no-daemon', '--console=plain', '-I', script, ...args],
      p,
      cleanEnv({ GRADLE_USER_HOME: join(dir, 'gradle-home'), BUILDSCOPE_AGENT_DIR: agentDir(), BUILDSCOPE_ACCESS_KEY: key, MY_SECRET: SECRET, ...env }),
      onSpawn,
    );
  }

  let offlineBuild = '';

  it('a passing --offline --parallel build on CI is spooled when its server stops during the build', async () => {
    const p = project('tiny');
    writeFileSync(join(p, '.gitignore'), '.gradle/\nbuild/\n');
    git(p, 'init');
    git(p, 'add', '.');
    git(p, 'commit', '-qm', 'first');
    const other = await startTestServer(await newLocation('sqlite'));
    const r = await gradle(
      p,
      ['--offline', '--parallel', '-Dbuildscope.tags=nightly', '-Dbuildscope.value.Team=tools', 'build', '-x', 'javadoc'],
      { BUILDSCOPE_SERVER: other.url, GITHUB_ACTIONS: 'true', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/tiny', GITHUB_RUN_ID: '42', BUILDSCOPE_VALUES: 'Stage=qa' },
      () => void other.close(),
    );
    expect(r.code, r.out).toBe(0);
    offlineBuild = linkedBuild(r.out, other.url);
    expect(r.out).toContain('could not be sent');
    expect(readdirSync(spoolDir())).toEqual([`${offlineBuild}.ndjson`]);
    // Private to the user whatever the umask: the directory 0700, the build 0600.
    expect(statSync(spoolDir()).mode & 0o777).toBe(0o700);
    expect(statSync(join(spoolDir(), `${offlineBuild}.ndjson`)).mode & 0o777).toBe(0o600);
  }, 300_000);

  it('a failing test is a verification failure; that build sends itself and the spooled one, once each', async () => {
    // Beside the failing HelloTest: a passing test and a failing one that print, and an ignored one.
    const more = `package demo;
import org.junit.*;
public class MoreTest {
  @Test public void passes() { System.out.println("hello from passes"); }
  @Test public void fails() {
    System.err.println("about to fail");
    Assert.assertEquals("prices round half cents", 3, Hello.two());
  }
  @Ignore("not yet") @Test public void later() {}
}
`;
    const r = await gradle(project('failing', { failingTest: true, sources: { 'src/test/java/demo/MoreTest.java': more } }), ['build']);
    expect(r.code).not.toBe(0);
    const failing = linkedBuild(r.out, server.url);
    expect(r.out).toContain('1 spooled build sent');
    // Listed as soon as the tool has exited: the agent sends before Gradle ends.
    expect(await search(server, auth, 'buildOutcome:failed hasVerificationFailure')).toEqual([failing]);
    expect((await search(server, auth, 'buildTool:native native.requestedTasks:build')).sort()).toEqual([failing, offlineBuild].sort());
    expect(await search(server, auth, 'tag:CI')).toEqual([offlineBuild]);
    expect(await search(server, auth, 'tag:LOCAL')).toEqual([failing]);
    expect(await search(server, auth, 'value:"Git branch=main"')).toEqual([offlineBuild]);
    expect(await search(server, auth, 'value:"CI build=https://github.com/acme/tiny/actions/runs/42" tag:nightly value:"Team=tools"')).toEqual([offlineBuild]);
    expect(await search(server, auth, 'native.buildOptions.offlineModeEnabled native.buildOptions.parallelProjectExecution')).toEqual([offlineBuild]);
    expect(await search(server, auth, 'project:tiny buildOutcome:succeeded buildToolVersion:4.4.1')).toEqual([offlineBuild]);
    expect(readdirSync(spoolDir())).toEqual([]);

    const { events, raw } = await exportedEvents(server, auth, offlineBuild);
    expectTasksInOrder(events);
    expect(events[0]!.type.eventType).toBe('BuildStarted');
    expect(events.at(-1)!.type.eventType).toBe('BuildFinished');
    expect(finishedTasks(events).map((t) => `${t.path} ${t.outcome}`)).toEqual([
      ':compileJava success',
      ':processResources no-source',
      ':classes success',
      ':jar success',
      ':assemble success',
      ':compileTestJava success',
      ':processTestResources no-source',
      ':testClasses success',
      ':test success',
      ':check success',
      ':build success',
    ]);
    for (const type of ['BuildAgent', 'ProjectStructure', 'BuildRequestedTasks', 'Environment', 'BuildOptions', 'BuildCache']) expect(ofType(events, type), type).toHaveLength(1);
    expect(ofType(events, 'BuildRequestedTasks')[0]!.data).toEqual({ requested: ['build'], excluded: ['javadoc'] });
    expect(ofType(events, 'BuildOptions')[0]!.data).toMatchObject({ offlineModeEnabled: true, parallelProjectExecution: true, buildCacheEnabled: false, continueOnFailureEnabled: false });
    expect(ofType(events, 'Environment')[0]!.data).toMatchObject({ numberOfCpuCores: expect.any(Number), jvmMaxMemoryHeapSize: expect.any(Number), jvmCharset: expect.any(String) });
    const values = Object.fromEntries(ofType(events, 'UserNamedValue').map((e) => [e.data['key'], e.data['value']]));
    // The contract's names and order of sources: the -D value and the environment's, merged (conformance-cases.json).
    expect(values).toMatchObject({ 'CI provider': 'GitHub Actions', 'Git branch': 'main', 'Git status': 'clean', Team: 'tools', Stage: 'qa' });
    expect(ofType(events, 'UserTag').map((e) => e.data['tag'])).toEqual(['CI', 'Linux', 'nightly']);
    expect(values['Git commit id']).toMatch(/^[0-9a-f]{40}$/);
    // Nothing of the environment leaves the machine: not the access key, not other variables.
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(SECRET);

    const failed = await exportedEvents(server, auth, failing);
    expect(finishedTasks(failed.events).find((t) => t.path === ':test')?.outcome).toBe('failed');
    const finished = ofType(failed.events, 'BuildFinished')[0]!.data as { outcome: string; failures: { classification: string; message: string }[] };
    expect(finished.outcome).toBe('failed');
    expect(finished.failures).toEqual([
      {
        classification: 'verification',
        message: expect.stringContaining('There were failing tests'),
        cause: expect.objectContaining({ type: 'org.gradle.api.GradleException', message: expect.stringContaining('There were failing tests'), stackTrace: expect.stringMatching(/^org\.gradle\.api\.GradleException: There were failing tests/) }),
      },
    ]);

    // Each test by Gradle's test listeners: identity, outcome, failure and own output.
    const tests = testsOf(failed.events);
    expect(tests.map((t) => `${t.suite}.${t.name} ${t.task} ${t.outcome}`).sort()).toEqual([
      'demo.HelloTest.two :test failed',
      'demo.MoreTest.fails :test failed',
      'demo.MoreTest.later :test skipped',
      'demo.MoreTest.passes :test passed',
    ]);
    const fails = tests.find((t) => t.name === 'fails')!;
    expect(fails.failure).toMatchObject({ type: 'java.lang.AssertionError', message: 'prices round half cents expected:<3> but was:<2>' });
    expect(fails.failure!.stackTrace).toMatch(/^java\.lang\.AssertionError: prices round half cents expected:<3> but was:<2>\n\tat /);
    expect(fails.failure!.stackTrace).toContain('at demo.MoreTest.fails(MoreTest.java:7)');
    expect(fails.output).toEqual({ stderr: 'about to fail\n' });
    expect(tests.find((t) => t.name === 'passes')!.output).toEqual({ stdout: 'hello from passes\n' });
    for (const t of tests) expect(t.finishedAt).toBeGreaterThanOrEqual(t.startedAt);
    expect(ofType(failed.events, 'ServerSettings').map((e) => e.data)).toEqual([{ testOutputCapturingEnabled: true, buildOutputCapturingEnabled: true, taskInputsCapturingEnabled: true }]);
    // The console as Gradle printed it, up to its verdict.
    const consoleText = ofType(failed.events, 'ConsoleOutput').map((e) => e.data['text']).join('');
    expect(consoleText).toContain('demo.MoreTest > fails FAILED');
    expect(consoleText).toContain('There were failing tests');
    // The duration is Gradle's own: from the build's start, not the init script's evaluation.
    const said = /BUILD FAILED in (\d+)s/.exec(r.out);
    expect(said, r.out).not.toBeNull();
    const recorded = failed.events.at(-1)!.timestamp - failed.events[0]!.timestamp;
    expect(Math.abs(recorded - Number(said![1]) * 1000)).toBeLessThan(1500);

    // The pages: the failed tests, their assertions and the failed task; the passing build passed.
    // (The agent sends the console before Gradle prints its verdict, BUILD FAILED.)
    await pages.check({ url: server.url, accessKey: key }, failing, {
      tool: 'gradle',
      outcome: 'failed',
      failedTests: [
        { name: 'demo.MoreTest.fails', message: 'prices round half cents expected:<3> but was:<2>' },
        { name: 'demo.HelloTest.two', message: 'expected:<3> but was:<2>' },
      ],
      failed: [':test'],
      causes: ['There were failing tests'],
      consoleLines: ['demo.MoreTest > fails FAILED', 'There were failing tests'],
      screenshot: true,
    });
    await pages.check({ url: server.url, accessKey: key }, offlineBuild, { tool: 'gradle', outcome: 'succeeded', consoleLines: [':compileJava', ':build'] });
  }, 300_000);

  it('a build script that fails is a non-verification failure, and the build is redacted on request', async () => {
    const r = await gradle(project('broken', { script: "throw new GradleException('the script is broken')\n" }), ['-Dbuildscope.redact=username,hostname,ipAddresses', '-Dbuildscope.testOutput=off', 'build'], { BUILDSCOPE_CONSOLE_OUTPUT: 'false' });
    expect(r.code).not.toBe(0);
    const id = linkedBuild(r.out, server.url);
    expect(await search(server, auth, 'buildOutcome:failed hasNonVerificationFailure !hasVerificationFailure')).toEqual([id]);
    const { events } = await exportedEvents(server, auth, id);
    expect(finishedTasks(events)).toEqual([]);
    expect(ofType(events, 'BuildFinished')[0]!.data).toEqual({
      outcome: 'failed',
      failures: [{ classification: 'non-verification', message: expect.stringContaining('the script is broken'), cause: expect.objectContaining({ type: 'org.gradle.api.GradleException', message: expect.stringContaining('the script is broken') }) }],
    });
    // Capture turned off by its settings: said in ServerSettings, and no console sent.
    expect(ofType(events, 'ServerSettings').map((e) => e.data)).toEqual([{ testOutputCapturingEnabled: false, buildOutputCapturingEnabled: false, taskInputsCapturingEnabled: true }]);
    expect(ofType(events, 'ConsoleOutput')).toEqual([]);
    // The JVM agents' older words are aliases of user, hostname and ip (agent-contract.json): every field left out.
    expect(ofType(events, 'BuildAgent')[0]!.data).toEqual({});
  }, 300_000);

  it('secrets: the shared tables through the script\'s own rules, a failing task whose message holds secrets, a git remote with a password, a readable agent.properties', async () => {
    // The build script reaches the agent's rules through gradle.buildscopeAgent: the same code
    // that redacts this build, run on every case of the shared tables.
    const leak = 'curl -u admin:hunter2 https://ci:p@ss-secret@repo.example.com/x ghp_abcdefghijklmnopqrstuvwxyz0123456789 Listed_S3cret';
    const p = project('leaky', {
      script: `
task tables {
  doLast {
    def agent = gradle.buildscopeAgent
    def listed = project.property('listed').split(',') as List
    def out = new StringBuilder()
    new File(project.property('casesIn')).eachLine('UTF-8') { line ->
      def parts = line.split('\\t', 2)
      def input = new String(parts[1].decodeBase64(), 'UTF-8')
      long t0 = System.nanoTime()
      def result = parts[0] == 'remote' ? agent.withoutUserInfo(input) : agent.redactText(input, listed)
      out << result.getBytes('UTF-8').encodeBase64().toString() << '\\t' << (System.nanoTime() - t0).intdiv(1000000) << '\\n'
    }
    new File(project.property('casesOut')).setText(out.toString(), 'UTF-8')
  }
}
task leak {
  doLast { throw new GradleException('${leak}') }
}
`,
      // A compile error, for the compiler's diagnostics in the failure's cause.
      sources: { 'src/main/java/demo/Broken.java': 'package demo;\npublic class Broken { int x = missing; }\n' },
    });
    const hostile = gitRemoteCases.cases.find((c) => c.name === 'raw @ in the password')!;
    git(p, 'init');
    git(p, 'remote', 'add', 'origin', hostile.remote);
    writeFileSync(join(p, 'cases.in'), harnessLines());
    const home = join(dir, 'agent-readable');
    mkdirSync(home);
    writeFileSync(join(home, 'agent.properties'), 'redactValues=Listed_S3cret\n', { mode: 0o644 });
    const r = await gradle(p, ['--continue', `-PcasesIn=${join(p, 'cases.in')}`, `-PcasesOut=${join(p, 'cases.out')}`, `-Plisted=${redactionCases.listed.join(',')}`, 'tables', 'leak', 'compileJava'], { BUILDSCOPE_AGENT_DIR: home, BUILDSCOPE_SERVER: server.url });
    // The build's own result and output are untouched: it fails, and says why in its own words.
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain(leak);
    expect(r.out).toContain(`Buildscope: ${join(home, 'agent.properties')} can be read by other users (mode 0644); it holds an access key: chmod 600 it`);
    checkHarnessOutput(readFileSync(join(p, 'cases.out'), 'utf8'), expect);

    const id = linkedBuild(r.out, server.url);
    const { events, raw } = await exportedEvents(server, auth, id);
    const { failures } = ofType(events, 'BuildFinished')[0]!.data as { failures: { message: string; cause?: Record<string, unknown> }[] };
    expect(failures.map((f) => f.message).sort()).toEqual([
      'Task :compileJava failed: Compilation failed; see the compiler error output for details.',
      'Task :leak failed: curl -u admin:*** https://***@repo.example.com/x ghp_*** ***',
    ]);
    // The compiler's errors, file from the project's root, and the end of the task's output.
    const compile = failures.find((f) => f.message.startsWith('Task :compileJava'))!.cause!;
    expect(compile['diagnostics']).toEqual([{ file: 'src/main/java/demo/Broken.java', line: 2, column: 31, severity: 'error', message: 'cannot find symbol' }]);
    expect(compile['outputTail']).toContain('error: cannot find symbol');
    // The cause and the console repeat the failing task's message: redacted like the rest.
    expect(failures.find((f) => f.message.startsWith('Task :leak'))!.cause!['stackTrace']).toMatch(/^org\.gradle\.api\.GradleException: curl -u admin:\*\*\* /);
    expect(ofType(events, 'ConsoleOutput').map((e) => e.data['text']).join('')).toContain('curl -u admin:***');
    for (const secret of ['hunter2', 'ss-secret', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'Listed_S3cret', key]) expect(raw).not.toContain(secret);
    const values = Object.fromEntries(ofType(events, 'UserNamedValue').map((e) => [e.data['key'], e.data['value']]));
    expect(values['Git repository']).toBe(hostile.sent);
    // The page: the compiler's error where it is, and both failed tasks.
    await pages.check({ url: server.url, accessKey: key }, id, {
      tool: 'gradle',
      outcome: 'failed',
      diagnostics: [{ file: 'src/main/java/demo/Broken.java', line: 2 }],
      failed: [':compileJava', ':leak'],
      causes: ['cannot find symbol'],
      consoleLines: ['error: cannot find symbol'],
    });
  }, 300_000);

  /** Like gradle(), in a Gradle daemon (stopped by the test that starts it). */
  function gradleInDaemon(p: string, args: readonly string[], env: Record<string, string> = {}) {
    return run(
      'gradle',
      ['--daemon', '--console=plain', '-I', script, ...args],
      p,
      cleanEnv({ GRADLE_USER_HOME: join(dir, 'gradle-home'), BUILDSCOPE_AGENT_DIR: agentDir(), BUILDSCOPE_ACCESS_KEY: key, ...env }),
    );
  }

  it('--build-cache against the cache node: the second build records from-cache outcomes; with --offline, the remote cache Gradle turned off; a reused daemon never sends with the environment of the build that started it', async () => {
    const node = await startTestNode({
      version: 4,
      cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } },
    });
    try {
      const p = project('cached', {
        settings: `buildCache {\n  local { enabled = false }\n  remote(HttpBuildCache) {\n    url = '${node.node.url}/cache/'\n    push = true\n    credentials { username = 'ci'; password = 'ci-secret' }\n  }\n}\n`,
      });
      const first = await gradle(p, ['--build-cache', 'compileJava']);
      expect(first.code, first.out).toBe(0);
      rmSync(join(p, 'build'), { recursive: true, force: true });
      const second = await gradle(p, ['--build-cache', 'compileJava']);
      expect(second.code, second.out).toBe(0);
      const [a, b] = [linkedBuild(first.out, server.url), linkedBuild(second.out, server.url)];
      expect(finishedTasks((await exportedEvents(server, auth, a)).events)).toEqual([{ path: ':compileJava', outcome: 'success', cacheable: true }]);
      const { events } = await exportedEvents(server, auth, b);
      expect(finishedTasks(events)).toEqual([{ path: ':compileJava', outcome: 'from-cache', cacheable: true }]);
      expect(ofType(events, 'BuildCache')[0]!.data).toEqual({ local: { enabled: false }, remote: { enabled: true, pushEnabled: true } });
      expect((await search(server, auth, 'native.buildCache.remote.enabled native.buildOptions.buildCacheEnabled')).sort()).toEqual([a, b].sort());

      // --offline: Gradle uses no remote cache, whatever the settings say. In a daemon, which the
      // next build reuses.
      rmSync(join(p, 'build'), { recursive: true, force: true });
      const other = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin] });
      try {
        const offline = await gradleInDaemon(p, ['--offline', '--build-cache', 'compileJava'], { BUILDSCOPE_SERVER: server.url });
        expect(offline.code, offline.out).toBe(0);
        const c = linkedBuild(offline.out, server.url);
        const events = (await exportedEvents(server, auth, c)).events;
        expect(finishedTasks(events)).toEqual([{ path: ':compileJava', outcome: 'success', cacheable: true }]);
        expect(ofType(events, 'BuildCache')[0]!.data).toEqual({ local: { enabled: false }, remote: { enabled: false, pushEnabled: false } });
        expect(ofType(events, 'BuildOptions')[0]!.data).toMatchObject({ offlineModeEnabled: true, buildCacheEnabled: true });

        // The same daemon for a build of another server with another key: Gradle 4.4.1 on Java 17
        // keeps the daemon's first environment, so the build must not go to the first server with
        // the first key; it reaches the second server, or is refused in one line.
        const otherKey = await other.user('ci', ['publishScan', 'accessBuildDataViaApi']);
        const second = await gradleInDaemon(p, ['-Dbuildscope.tags=second-daemon-build', 'compileJava'], { BUILDSCOPE_SERVER: other.url, BUILDSCOPE_ACCESS_KEY: otherKey });
        expect(second.code, second.out).toBe(0);
        expect(await search(server, auth, 'tag:second-daemon-build')).toEqual([]);
        const refused = second.out.split('\n').filter((l) => l.startsWith('Buildscope: build not sent: this Gradle daemon started before the build'));
        if (second.out.includes(`Buildscope: ${other.url}/builds/`)) {
          expect(await search(other, bearer(otherKey), 'tag:second-daemon-build')).toEqual([linkedBuild(second.out, other.url)]);
        } else {
          expect(refused, second.out).toHaveLength(1);
          expect(refused[0]).toContain('BUILDSCOPE_ACCESS_KEY, BUILDSCOPE_AGENT_DIR, BUILDSCOPE_SERVER may be another build');
          expect(await search(other, bearer(otherKey), 'tag:second-daemon-build')).toEqual([]);
        }
        expect(second.out).not.toContain(`Buildscope: ${server.url}`);
      } finally {
        await other.close();
        await run('gradle', ['--stop'], p, cleanEnv({ GRADLE_USER_HOME: join(dir, 'gradle-home') }));
      }
    } finally {
      await node.close();
    }
  }, 300_000);

  it('why a task missed the cache, from two real builds: a changed source file names :compileJava and that file, a changed compiler option names that option, and nothing else', async () => {
    const cache = join(dir, 'local-cache');
    const p = project('inputs', { settings: `buildCache { local(DirectoryBuildCache) { directory = new File('${cache}') } }\n` });
    const hello = join(p, 'src/main/java/demo/Hello.java');
    const original = readFileSync(hello, 'utf8');
    const build = async () => {
      rmSync(join(p, 'build'), { recursive: true, force: true });
      const r = await gradle(p, ['--build-cache', 'compileTestJava']);
      expect(r.code, r.out).toBe(0);
      return linkedBuild(r.out, server.url);
    };
    const compare = (a: string, b: string) => compareOver((path) => server.get(path, auth), a, b);
    const misses = (c: Comparison) => c.summary.filter((e) => e.reason === 'cache-miss').map((e) => e.difference);
    await build(); // fills the cache
    const fromCache = await build();
    expect(finishedTasks((await exportedEvents(server, auth, fromCache)).events).filter((t) => t.path.startsWith(':compile'))).toMatchObject([{ path: ':compileJava', outcome: 'from-cache' }, { path: ':compileTestJava', outcome: 'from-cache' }]);
    const inputs = ofType((await exportedEvents(server, auth, fromCache)).events, 'TaskInputs');
    expect(inputs.map((e) => e.data['path'])).toEqual([':compileJava', ':compileTestJava']);
    expect(inputs[0]!.data).toMatchObject({ files: { source: { 'src/main/java/demo/Hello.java': expect.stringMatching(/^[0-9a-f]{32}$/) } }, outputs: ['build/classes/java/main'] });

    // A changed source file (a new method: the classes' API changes, so the tests compile again).
    writeFileSync(hello, original.replace('}\n', ' public static int three() { return 3; } }\n').replace(/}\s*}\n$/, '} }\n'));
    const changedSource = await build();
    const bySource = await compare(fromCache, changedSource);
    expect(misses(bySource)).toMatchObject([
      { kind: 'task-inputs', path: ':compileJava', missed: true, cause: 'inputs', inputs: [{ name: 'source', change: 'changed', files: [{ path: 'src/main/java/demo/Hello.java', change: 'changed' }], producedBy: [] }] },
    ]);
    const tasks = bySource.sections.find((s) => s.id === 'tasks')!.differences.filter((d) => d.kind === 'task-inputs');
    expect(tasks.map((d) => [d.path, d.cause])).toEqual([[':compileJava', 'inputs'], [':compileTestJava', 'upstream']]);
    expect(tasks[1]).toMatchObject({ inputs: [{ name: 'classpath', producedBy: [':compileJava'] }] });

    // A changed compiler option, the sources as they were: only :compileJava misses, for that option.
    writeFileSync(hello, original);
    writeFileSync(join(p, 'build.gradle'), `${readFileSync(join(p, 'build.gradle'), 'utf8')}compileJava.options.compilerArgs = ['-Xlint:unchecked']\n`);
    const changedOption = await build();
    const byOption = await compare(fromCache, changedOption);
    expect(misses(byOption)).toMatchObject([{ path: ':compileJava', cause: 'inputs', inputs: [{ name: 'options.compilerArgs', change: 'changed', files: [], producedBy: [] }] }]);
    expect(byOption.sections.find((s) => s.id === 'tasks')!.differences.filter((d) => d.kind === 'task-inputs').map((d) => d.path)).toEqual([':compileJava']);
  }, 300_000);

  it('the dependencies each configuration resolved, from two real builds: another version of a module is a dependency difference of the comparison', async () => {
    // A Maven repository on disk: acme:money 1.2 and 1.3 (a pom each, and any jar).
    const repo = join(dir, 'maven-repo');
    for (const version of ['1.2', '1.3']) {
      const at = join(repo, 'acme/money', version);
      mkdirSync(at, { recursive: true });
      copyFileSync(JUNIT[0]!, join(at, `money-${version}.jar`));
      writeFileSync(
        join(at, `money-${version}.pom`),
        `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>acme</groupId><artifactId>money</artifactId><version>${version}</version><packaging>jar</packaging></project>\n`,
      );
    }
    // A subproject that depends on the root one: its path, and a project dependency, as sent.
    const repositories = `repositories { maven { url '${pathToFileURL(repo).href}' } }\n`;
    const p = project('deps', { settings: "include 'lib'\n", script: `${repositories}dependencies { compile 'acme:money:1.2' }\n` });
    mkdirSync(join(p, 'lib/src/main/java/lib'), { recursive: true });
    writeFileSync(join(p, 'lib/build.gradle'), `apply plugin: 'java'\n${repositories}dependencies { compile project(':') }\n`);
    // A source file: without one its compileJava is NO-SOURCE and Gradle resolves no classpath for it.
    writeFileSync(join(p, 'lib/src/main/java/lib/Uses.java'), 'package lib;\npublic class Uses { int two = demo.Hello.two(); }\n');
    const build = async () => {
      const r = await gradle(p, ['compileJava']);
      expect(r.code, r.out).toBe(0);
      return linkedBuild(r.out, server.url);
    };
    const resolved = async (id: string) => ofType((await exportedEvents(server, auth, id)).events, 'ResolvedDependencies').map((e) => e.data);
    const a = await build();
    // Gradle 4.4.1 resolves, for compileJava, each project's compile classpath and nothing else.
    expect(await resolved(a)).toEqual([
      { project: ':', configuration: 'compileClasspath', dependencies: ['acme:money:1.2'] },
      { project: ':lib', configuration: 'compileClasspath', dependencies: ['acme:money:1.2', 'project :'] },
    ]);

    const script = join(p, 'build.gradle');
    writeFileSync(script, readFileSync(script, 'utf8').replace("'acme:money:1.2'", "'acme:money:1.3'"));
    const b = await build();
    expect(await resolved(b)).toContainEqual({ project: ':', configuration: 'compileClasspath', dependencies: ['acme:money:1.3'] });
    const comparison = await compareOver((path) => server.get(path, auth), a, b);
    const changed = { kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:money', before: '1.2', after: '1.3' } as const;
    // The one module that moved, in both projects (:lib has it through the root), and nothing else.
    expect(comparison.sections.find((s) => s.id === 'dependencies')?.differences).toEqual([changed, { ...changed, project: ':lib' }]);
    expect(comparison.summary).toContainEqual({ reason: 'dependency', difference: changed });
  }, 300_000);
});
