// What `buildscope run -- <command>` adds to the command's wall time: a tiny npm project whose
// `npm test` is `node -e 0`, run bare and wrapped, alternately, against a real server on loopback
// that takes every build. Peers in the same run: `node -e 0` and `npm test` bare; also
// `buildscope --version` (the CLI's start alone) and `buildscope run -- node -e 0` (the wrapper
// around a command that loads no package manager). Reports the medians, the difference and ratio
// of each wrapped command to its bare peer, and checks that every wrapped build reached the server
// (the sending may end after the command: the bench waits for the builds, up to 60 s).
// Goal: `buildscope run -- npm test` at most 200 ms over `npm test`.
//
//   node --import tsx bench/run-overhead.ts [--quick] [--runs N]
//
// Runs the compiled CLI (bin/buildscope.js over dist/): `npm run build` first.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SEE_EVERYTHING } from '../src/store/types.js';
import { newLocation, startTestServer } from '../test/server/support.js';
import { flag, option } from './support/args.js';

const runs = Number(option('--runs') ?? (flag('--quick') ? 5 : 15));
const bin = resolve('bin/buildscope.js');
const GOAL_MS = 200;

function timed(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((done, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => (code === 0 ? done(performance.now() - started) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Variant {
  readonly name: string;
  readonly args: readonly string[];
  /** The bare command this one wraps, by name. */
  readonly peer?: string;
  /** Whether it records a build. */
  readonly records?: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'node -e 0', args: [process.execPath, '-e', '0'] },
  { name: 'buildscope --version', args: [process.execPath, bin, '--version'], peer: 'node -e 0' },
  { name: 'buildscope run -- node -e 0', args: [process.execPath, bin, 'run', '--', process.execPath, '-e', '0'], peer: 'node -e 0', records: true },
  { name: 'npm test', args: ['npm', 'test'] },
  { name: 'buildscope run -- npm test', args: [process.execPath, bin, 'run', '--', 'npm', 'test'], peer: 'npm test', records: true },
];

const server = await startTestServer(await newLocation('sqlite'));
const key = await server.user('bench', ['publishScan']);
const dir = mkdtempSync(join(tmpdir(), 'bench-run-'));
const project = join(dir, 'project');
mkdirSync(project);
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0', private: true, scripts: { test: 'node -e 0' } }));
// Not a CI here (a CI sends before the command ends, by design), whatever runs the bench.
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CI|GITHUB_ACTIONS|GITLAB_CI|JENKINS_URL|BUILDKITE|TEAMCITY_VERSION|TF_BUILD|CIRCLECI|TRAVIS)$/.test(k)));
Object.assign(env, { BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key, BUILDSCOPE_AGENT_DIR: join(dir, 'agent'), npm_config_update_notifier: 'false', npm_config_fund: 'false' });

const times = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
let recorded = 0;
let delivered = 0;
try {
  for (const v of VARIANTS) await timed(v.args[0]!, v.args.slice(1), project, env); // warm-up
  recorded += VARIANTS.filter((v) => v.records).length;
  for (let i = 0; i < runs; i++) {
    for (const v of VARIANTS) {
      times.get(v.name)!.push(await timed(v.args[0]!, v.args.slice(1), project, env));
      if (v.records) recorded++;
    }
  }
  const waitUntil = Date.now() + 60_000;
  while (Date.now() < waitUntil) {
    delivered = (await server.store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 10_000 })).length;
    if (delivered >= recorded) break;
    await new Promise((r) => setTimeout(r, 200));
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const medians = new Map([...times].map(([k, v]) => [k, median(v)]));
const rows = VARIANTS.map((v) => {
  const ms = medians.get(v.name)!;
  const peer = v.peer === undefined ? undefined : medians.get(v.peer)!;
  return { command: v.name, medianMs: ms, ...(peer !== undefined ? { peer: v.peer, differenceMs: ms - peer, ratio: ms / peer } : {}) };
});
const f = (n: number) => n.toFixed(0);
console.log(`\n\`buildscope run\` overhead, median of ${runs} alternating runs each (peer: the bare command in the same run)\n`);
console.log('| command | median (ms) | peer | difference (ms) | ratio |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.command} | ${f(r.medianMs)} | ${r.peer ?? ''} | ${r.differenceMs === undefined ? '' : f(r.differenceMs)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} |`);
const npm = rows.find((r) => r.command === 'buildscope run -- npm test')!;
console.log(`\nbuilds recorded ${recorded}, on the server ${delivered}; goal: run -- npm test at most ${GOAL_MS} ms over npm test: ${npm.differenceMs! <= GOAL_MS ? 'met' : 'not met'} (${f(npm.differenceMs!)} ms)`);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/run-overhead.json', JSON.stringify({ runs, goalMs: GOAL_MS, recorded, delivered, rows }, null, 2) + '\n');
if (delivered < recorded) process.exitCode = 1;
