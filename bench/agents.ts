// Capture agent overhead and Build Event Service ack latency. Peer: the same build without the
// agent, in the same run (interleaved, so machine noise hits both alike).
//
//   node --import tsx bench/agents.ts [--quick] [--runs N]
//
// - npm: a 10-script build (`npm run build` running ten `npm run stepN`), plain vs zero-touch
//   (NODE_OPTIONS=--require preload; the sender runs detached after npm exits) vs
//   `buildscope run -- npm run build` (outside a CI it spools the build and a detached sender
//   sends it; bench/run-overhead.ts measures what `run` adds to a short command).
// - pytest: a 10-test suite, plain vs with -p buildscope_pytest (sends at the end).
// - BES: a recorded Bazel stream (28 events) replayed over gRPC; time from writing an event to
//   its acknowledgement. Bazel waits on acks, so this is what the endpoint adds to a build.
// Goal: agent overhead under 5% of the build's wall time. Needs dist/ (node scripts/build.js).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { parseConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { BAZEL_EVENT_TYPE_URL, encodeBazelEvent, publishBuildEventService } from '../src/bes/protocol.js';
import type { BepEvent } from '../src/bes/bep-build.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const runsArg = argv.indexOf('--runs');
const RUNS = runsArg >= 0 ? Number(argv[runsArg + 1]) : quick ? 3 : 7;

interface Sample {
  readonly wall: number;
  /** CPU time (user + system) of the command and every process it waited for, from bash's `times`. */
  readonly cpu: number;
}

/** Runs a command under bash and measures wall time and the CPU time of its process tree. */
function time(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Sample> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('bash', ['-c', `${quoted} >/dev/null 2>&1; times`], { ...options, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', fail);
    child.on('close', () => {
      const wall = performance.now() - started;
      // Second line: children's user and system time, e.g. "0m1.234s 0m0.456s".
      const line = out.trim().split('\n')[1] ?? '';
      const seconds = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      done({ wall, cpu: (seconds[0] ?? 0) * 1000 + (seconds[1] ?? 0) * 1000 });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const dir = mkdtempSync(join(tmpdir(), 'bs-bench-agents-'));
const server = await startServer({
  config: parseConfig({ server: { host: '127.0.0.1', port: 0 }, bes: { port: 0 } }, { data: join(dir, 'data') }),
  logger: createLogger('bench', 'warn'),
  print: () => undefined,
});
const key = server.created!.accessKey;
const baseEnv: NodeJS.ProcessEnv = { ...process.env, HOME: dir, BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: key, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool') };
delete baseEnv['NODE_OPTIONS'];

interface Row {
  case: string;
  variant: string;
  wallMedianMs: number;
  wallOverheadPct: number;
  cpuMedianMs: number;
  cpuOverheadMs: number;
  cpuOverheadPct: number;
}
const rows: Row[] = [];
const round1 = (x: number) => Math.round(x * 10) / 10;
function record(name: string, samples: Record<string, Sample[]>): void {
  const wallPeer = median(samples['plain']!.map((s) => s.wall));
  const cpuPeer = median(samples['plain']!.map((s) => s.cpu));
  for (const [variant, xs] of Object.entries(samples)) {
    const wall = median(xs.map((s) => s.wall));
    const cpu = median(xs.map((s) => s.cpu));
    rows.push({
      case: name,
      variant,
      wallMedianMs: Math.round(wall),
      wallOverheadPct: round1(((wall - wallPeer) / wallPeer) * 100),
      cpuMedianMs: Math.round(cpu),
      cpuOverheadMs: Math.round(cpu - cpuPeer),
      cpuOverheadPct: round1(((cpu - cpuPeer) / cpuPeer) * 100),
    });
  }
}

try {
  // npm: ten scripts, each its own npm process (what a script chain costs).
  const pkg = join(dir, 'pkg');
  mkdirSync(pkg);
  const scripts: Record<string, string> = {};
  for (let i = 1; i <= 10; i++) scripts[`step${i}`] = `node -e "let s=0;for(let i=0;i<2e6;i++)s+=i;console.log(${i})"`;
  scripts['build'] = Array.from({ length: 10 }, (_, i) => `npm run step${i + 1} --silent`).join(' && ');
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'bench-app', version: '1.0.0', private: true, scripts }));
  const preload = resolve('src/agents/npm/preload.cjs');
  const cli = resolve('bin/buildscope.js');
  const npm: Record<string, Sample[]> = { plain: [], 'zero-touch preload': [], 'buildscope run': [] };
  await time('npm', ['run', 'build', '--silent'], { cwd: pkg, env: baseEnv }); // warm the file cache
  for (let r = 0; r < RUNS; r++) {
    npm['plain']!.push(await time('npm', ['run', 'build', '--silent'], { cwd: pkg, env: baseEnv }));
    npm['zero-touch preload']!.push(await time('npm', ['run', 'build', '--silent'], { cwd: pkg, env: { ...baseEnv, NODE_OPTIONS: `--require=${preload}` } }));
    npm['buildscope run']!.push(await time(process.execPath, [cli, 'run', '--', 'npm', 'run', 'build', '--silent'], { cwd: pkg, env: baseEnv }));
  }
  record('npm run build (10 scripts)', npm);

  // pytest: ten tests.
  const hasPytest = spawnSync('pytest-3', ['--version']).status === 0;
  if (hasPytest) {
    const py = join(dir, 'py');
    mkdirSync(py);
    writeFileSync(join(py, 'test_ten.py'), Array.from({ length: 10 }, (_, i) => `def test_${i}():\n    assert sum(range(200000)) > 0\n`).join('\n'));
    const pyEnv = { ...baseEnv, PYTHONPATH: resolve('src/agents/python/pylib'), PYTHONDONTWRITEBYTECODE: '1' };
    const pytest: Record<string, Sample[]> = { plain: [], 'with plugin': [] };
    await time('pytest-3', ['-q', '-p', 'no:cacheprovider'], { cwd: py, env: pyEnv });
    for (let r = 0; r < RUNS; r++) {
      pytest['plain']!.push(await time('pytest-3', ['-q', '-p', 'no:cacheprovider'], { cwd: py, env: pyEnv }));
      pytest['with plugin']!.push(await time('pytest-3', ['-q', '-p', 'no:cacheprovider', '-p', 'buildscope_pytest'], { cwd: py, env: pyEnv }));
    }
    record('pytest (10 tests)', pytest);
  }

  // BES: ack latency of a replayed recorded stream.
  const events = readFileSync('test/agents/fixtures/bazel/failing-test.bep.json', 'utf8').trim().split('\n').map((l) => JSON.parse(l) as BepEvent);
  const Client = grpc.makeGenericClientConstructor(publishBuildEventService(), 'PublishBuildEvent');
  const client = new Client(server.besUrl!.replace('grpc://', ''), grpc.credentials.createInsecure()) as unknown as Record<string, (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, { sequenceNumber: string }>>;
  const latencies: number[] = [];
  const streams = quick ? 10 : 40;
  const streamMs: number[] = [];
  for (let s = 0; s < streams; s++) {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${key}`);
    const call = client['PublishBuildToolEventStream']!(metadata);
    const invocationId = `00000000-0000-4000-8000-${String(s).padStart(12, '0')}`;
    const streamId = { buildId: invocationId, invocationId, component: 'TOOL' };
    const sentAt = new Map<number, number>();
    const began = performance.now();
    await new Promise<void>((done) => {
      call.on('data', (ack) => latencies.push(performance.now() - sentAt.get(Number(ack.sequenceNumber))!));
      call.on('end', () => done());
      call.on('error', () => done());
      const all = events.map((e) => (e['started'] ? { ...e, started: { ...(e['started'] as object), uuid: invocationId } } : e));
      all.forEach((e, i) => {
        sentAt.set(i + 1, performance.now());
        call.write({ orderedBuildEvent: { streamId, sequenceNumber: String(i + 1), event: { bazelEvent: { typeUrl: BAZEL_EVENT_TYPE_URL, value: Buffer.from(encodeBazelEvent(e)) } } } });
      });
      sentAt.set(all.length + 1, performance.now());
      call.write({ orderedBuildEvent: { streamId, sequenceNumber: String(all.length + 1), event: { componentStreamFinished: { type: 'FINISHED' } } } });
      call.end();
    });
    streamMs.push(performance.now() - began);
  }
  (client as unknown as grpc.Client).close();

  console.log(`\nAgent overhead (median of ${RUNS} runs; peer = the same build without the agent). Wall time on a`);
  console.log('shared machine is noisy; CPU time of the build\'s process tree is the steadier measure of what the agent adds.\n');
  console.log('case                          variant               wall ms  wall +%   CPU ms  CPU +ms  CPU +%');
  for (const r of rows) {
    console.log(
      `${r.case.padEnd(30)}${r.variant.padEnd(22)}${String(r.wallMedianMs).padStart(7)}${String(r.wallOverheadPct).padStart(8)}${String(r.cpuMedianMs).padStart(9)}${String(r.cpuOverheadMs).padStart(9)}${String(r.cpuOverheadPct).padStart(8)}`,
    );
  }
  const bes = { streams, events: latencies.length, ackMedianMs: Math.round(median(latencies) * 100) / 100, ackP99Ms: Math.round(pct(latencies, 99) * 100) / 100, streamMedianMs: Math.round(median(streamMs)) };
  console.log(`\nBES: ${bes.streams} replayed streams, ${bes.events} events; ack latency median ${bes.ackMedianMs} ms, p99 ${bes.ackP99Ms} ms; whole stream incl. storing the build: median ${bes.streamMedianMs} ms`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/agents.json', JSON.stringify({ runs: RUNS, overhead: rows, bes }, null, 2) + '\n');
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
