// Overhead of the capture agents on a real build: a 10-task build run with and without the agent,
// alternately, against a real server on loopback that takes every build. Peer: the same build
// without the agent, in the same run. Reports median wall times and their difference, and the
// agent's own time inside the build as it measures it (-Dbuildscope.timing=true: start, the task
// or mojo callbacks, the end including sending), per build and as a share of the build, and per
// task (its time in the task or mojo callbacks, divided by the tasks).
// On a shared machine the wall-time difference of two whole builds is mostly noise (an empty init
// script moves it by as much); the agent's own time is what it adds to the build's critical path.
//
//   node --import tsx bench/agent-overhead.ts [--quick] [--runs N] [--only gradle|maven]
//
// Gradle: Debian's gradle 4.4.1, one warm daemon for both variants (the daemon is what users run),
// 10 custom tasks of the base plugin that each sleep 200 ms. Maven: mvn 3.8.7 offline, a reactor of
// two modules whose `test -DskipTests` makes 10 mojo executions (resources, compile, testResources,
// testCompile, test per module), each run a fresh JVM as Maven always is. Goal: under 5%.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPlugin } from '../src/http/export-plugin.js';
import { gradleInitScript } from '../src/agents/gradle.js';
import { buildMavenExtension, mavenHome } from '../src/agents/maven.js';
import { newLocation, startTestServer } from '../test/server/support.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const runs = Number(value('--runs') ?? (quick ? 2 : 5));
const only = value('--only');

interface Timed {
  readonly ms: number;
  /** The agent's own time, from its `agent time` line (with-agent runs only). */
  readonly agentMs?: number;
  /** Of that, the time in its task (Gradle) or mojo (Maven) callbacks. */
  readonly callbackMs?: number;
}

function timed(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${out}`));
      const m = /Buildscope: agent time ([\d.]+) ms/.exec(out);
      const cb = /\d+ (?:task|mojo) callbacks ([\d.]+)/.exec(out);
      resolve({ ms: performance.now() - started, ...(m ? { agentMs: Number(m[1]) } : {}), ...(cb ? { callbackMs: Number(cb[1]) } : {}) });
    });
  });
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Row {
  /** For Gradle: the median of the same build with an empty init script, i.e. what Gradle itself charges for any init script. */
  emptyInitScriptMs?: number;
  tool: string;
  tasks: number;
  runs: number;
  withoutMs: number;
  withMs: number;
  wallDifferenceMs: number;
  agentMs: number;
  agentPct: number;
  /** The agent's time in task or mojo callbacks, per task: what each more task costs. */
  agentPerTaskMs: number;
}

async function measure(tool: string, tasks: number, plain: () => Promise<Timed>, agent: () => Promise<Timed>, empty?: () => Promise<Timed>): Promise<Row> {
  await plain(); // warm-up: file system caches, and Gradle's daemon and script caches
  await agent();
  await empty?.();
  const a: Timed[] = [];
  const b: Timed[] = [];
  const c: Timed[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await plain());
    b.push(await agent());
    if (empty) c.push(await empty());
  }
  const withoutMs = median(a.map((t) => t.ms));
  const withMs = median(b.map((t) => t.ms));
  const agentMs = median(b.map((t) => t.agentMs ?? NaN));
  return { ...(empty ? { emptyInitScriptMs: median(c.map((t) => t.ms)) } : {}), tool, tasks, runs, withoutMs, withMs, wallDifferenceMs: withMs - withoutMs, agentMs, agentPct: (100 * agentMs) / withoutMs, agentPerTaskMs: median(b.map((t) => t.callbackMs ?? NaN)) / tasks };
}

const server = await startTestServer(await newLocation('sqlite'), { plugins: [exportPlugin] });
const key = await server.user('bench', ['publishScan']);
const dir = mkdtempSync(join(tmpdir(), 'bench-agent-'));
const env = { ...process.env, BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key, BUILDSCOPE_AGENT_DIR: join(dir, 'agent') };
const rows: Row[] = [];
try {
  if (only !== 'maven') {
    const p = join(dir, 'gradle');
    mkdirSync(p);
    writeFileSync(join(p, 'settings.gradle'), "rootProject.name = 'ten'\n");
    writeFileSync(
      join(p, 'build.gradle'),
      "apply plugin: 'base'\n" + Array.from({ length: 10 }, (_, i) => `task t${i}${i > 0 ? `(dependsOn: 't${i - 1}')` : ''} { doLast { Thread.sleep(200) } }\n`).join(''),
    );
    const script = join(dir, 'buildscope.gradle');
    writeFileSync(script, gradleInitScript({}));
    const emptyScript = join(dir, 'empty.gradle');
    writeFileSync(emptyScript, '// nothing\n');
    const genv = { ...env, GRADLE_USER_HOME: join(dir, 'gradle-home') };
    const args = ['--daemon', '--console=plain', '-q', 't9'];
    try {
      rows.push(await measure('gradle 4.4.1', 10, () => timed('gradle', args, p, genv), () => timed('gradle', ['-I', script, '-Dbuildscope.timing=true', ...args], p, genv), () => timed('gradle', ['-I', emptyScript, ...args], p, genv)));
    } finally {
      spawnSync('gradle', ['--stop'], { cwd: p, env: genv });
    }
  }
  if (only !== 'gradle') {
    const ext = buildMavenExtension(mavenHome(), join(dir, 'maven-ext'));
    const p = join(dir, 'maven');
    const plugins = '<plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin><plugin><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin><plugin><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>';
    const props = '<properties><maven.compiler.source>11</maven.compiler.source><maven.compiler.target>11</maven.compiler.target><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>';
    mkdirSync(p);
    writeFileSync(join(p, 'pom.xml'), `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>demo</groupId><artifactId>parent</artifactId><version>1.0</version><packaging>pom</packaging><modules><module>a</module><module>b</module></modules></project>`);
    for (const m of ['a', 'b']) {
      mkdirSync(join(p, m, 'src/main/java/demo'), { recursive: true });
      writeFileSync(join(p, m, 'pom.xml'), `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>demo</groupId><artifactId>${m}</artifactId><version>1.0</version>${props}<build><plugins>${plugins}</plugins></build></project>`);
      writeFileSync(join(p, m, 'src/main/java/demo', `${m.toUpperCase()}.java`), `package demo;\npublic class ${m.toUpperCase()} {}\n`);
    }
    const args = ['-B', '-o', '-q', '-Dmaven.repo.local=/usr/share/maven-repo', '-DskipTests', 'test'];
    rows.push(await measure('mvn 3.8.7', 10, () => timed('mvn', args, p, env), () => timed('mvn', [`-Dmaven.ext.class.path=${ext.jar}`, '-Dbuildscope.timing=true', ...args], p, env)));
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const f = (n: number) => n.toFixed(0);
console.log(`\nAgent overhead, median of ${runs} alternating runs each (peer: the same build without the agent)\n`);
console.log('| build | tasks | without agent (ms) | with agent (ms) | wall difference (ms) | agent time per build (ms) | agent share of build | agent time per task, in its callbacks (ms) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  if (r.emptyInitScriptMs !== undefined) console.log(`| ${r.tool}, empty init script | ${r.tasks} | ${f(r.withoutMs)} | ${f(r.emptyInitScriptMs)} | ${f(r.emptyInitScriptMs - r.withoutMs)} | 0 | | |`);
  console.log(`| ${r.tool} | ${r.tasks} | ${f(r.withoutMs)} | ${f(r.withMs)} | ${f(r.wallDifferenceMs)} | ${r.agentMs.toFixed(1)} | ${r.agentPct.toFixed(1)}% | ${r.agentPerTaskMs.toFixed(1)} |`);
}
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/agent-overhead.json', JSON.stringify({ runs, goalPct: 5, rows }, null, 2) + '\n');
