// Memory and latency of the server while its Build Event Service endpoint is attacked:
//
//   A. one publishScan key streams invocations of 20 events of 30 MB each (Bazel progress output)
//      and never finishes them, three times (30 MB is over bes.maxMessageBytes, 16 MiB by default,
//      so the same is run with events of 15 MB, under it);
//   B. thirty streams without credentials send one 60 MB message each;
//
// against a real server process (`serve --bes-port`, a 1.5 GB heap as in production sizing). The
// server's resident set (VmRSS of /proc) is read before, at the peak of each batch and after; an
// unrelated request (GET /api/version, from a process of its own) is timed before (the floor, same
// run) and during each batch.
// Goals: the RSS grows by less than 100 MB under each attack, and the unrelated request keeps its
// latency (median during / median before).
//
//   node --import tsx bench/bes-attacks.ts [--quick]

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { BAZEL_EVENT_TYPE_URL, encodeBazelEvent, publishBuildEventService } from '../src/bes/protocol.js';
import { startProbe } from './support/probe.js';

const quick = process.argv.includes('--quick');
const MB = 1024 * 1024;
const EVENT_SIZES_MB = quick ? [30, 8] : [30, 15];
const ANON_MB = quick ? 20 : 60;

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const rssMb = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-bench-bes-'));
  const [port, besPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['--max-old-space-size=1536', '--import', 'tsx', 'src/cli/run.ts', 'serve', '--data', join(dir, 'data'), '--port', String(port), '--bes-port', String(besPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const key = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /access key (\S+) \(shown only this once\)/.exec(out);
      if (m && out.includes('Build Event Service at')) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  const pid = child.pid!;
  const url = `http://127.0.0.1:${port}`;
  const Client = grpc.makeGenericClientConstructor(publishBuildEventService(), 'PublishBuildEvent');
  const client = new Client(`127.0.0.1:${besPort}`, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 256 * MB }) as unknown as Record<string, (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, unknown>>;

  // GET /api/version from a process of its own: the attacking process is busy serializing.
  const prober = startProbe(`${url}/api/version`);
  const probe = async (stop: Promise<unknown>, out: number[] = []): Promise<number[]> => {
    out.push(...(await prober.during(stop)));
    return out;
  };
  let peak = 0;
  const watch = (stop: Promise<unknown>): Promise<void> =>
    (async () => {
      let done = false;
      void stop.finally(() => (done = true));
      while (!done) {
        peak = Math.max(peak, rssMb(pid));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

  const streamOf = (header: string | undefined) => {
    const metadata = new grpc.Metadata();
    if (header) metadata.set('authorization', header);
    const call = client['PublishBuildToolEventStream']!(metadata);
    const ended = new Promise<string>((resolve) => {
      call.on('error', (e: grpc.ServiceError) => resolve(grpc.status[e.code] ?? String(e.code)));
      call.on('end', () => resolve('OK'));
      call.on('data', () => undefined);
    });
    return { call, ended };
  };
  const bazelEvent = (mb: number) => Buffer.from(encodeBazelEvent({ id: { progress: { opaqueCount: 1 } }, progress: { stdout: 'x'.repeat(mb * MB) } }));
  const started = (uuid: string) => Buffer.from(encodeBazelEvent({ id: { started: {} }, started: { uuid, command: 'build', startTimeMillis: String(Date.now()) } }));
  const req = (uuid: string, seq: number, value: Buffer) => ({ orderedBuildEvent: { streamId: { invocationId: uuid, component: 'TOOL' }, sequenceNumber: String(seq), event: { bazelEvent: { typeUrl: BAZEL_EVENT_TYPE_URL, value } } } });

  // The floor: the unrelated request on the idle server.
  const idle: number[] = [];
  await probe(new Promise((r) => setTimeout(r, 2000)), idle);
  const before = rssMb(pid);
  const rows: { attack: string; rssBeforeMb: number; rssPeakMb: number; rssAfterMb: number; growthMb: number; statuses: string; p50IdleMs: number; p50DuringMs: number; ratio: number }[] = [];

  for (const eventMb of EVENT_SIZES_MB) {
  const big = bazelEvent(eventMb);
  for (let batch = 1; batch <= 3; batch++) {
    const rssBefore = rssMb(pid);
    peak = rssBefore;
    const attack = (async () => {
      const uuid = `00000000-0000-4000-8000-0000000${String(eventMb).padStart(3, '0')}0${batch}`;
      const { call, ended } = streamOf(`Bearer ${key}`);
      call.write(req(uuid, 1, started(uuid)));
      let over = false;
      void ended.then(() => (over = true));
      // A refused call takes no more writes (their callbacks never come): stop at its status.
      for (let i = 2; i <= 21 && !over; i++) await Promise.race([new Promise<void>((r) => call.write(req(uuid, i, big), () => r())), ended]);
      call.end(); // unfinished: no componentStreamFinished
      return ended;
    })();
    const during = probe(attack);
    await watch(attack);
    const statuses = await attack;
    const samples = await during;
    const after = rssMb(pid);
    rows.push({ attack: `A${batch}: 20 x ${eventMb} MB unfinished`, rssBeforeMb: rssBefore, rssPeakMb: peak, rssAfterMb: after, growthMb: Math.max(peak, after) - rssBefore, statuses, p50IdleMs: median(idle), p50DuringMs: median(samples), ratio: median(samples) / median(idle) });
  }
  }

  {
    const rssBefore = rssMb(pid);
    peak = rssBefore;
    const huge = bazelEvent(ANON_MB);
    const attack = Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const uuid = `11111111-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`;
        const { call, ended } = streamOf(undefined);
        call.write(req(uuid, 1, huge));
        call.end();
        return ended;
      }),
    );
    const during = probe(attack);
    await watch(attack);
    const statuses = [...new Set(await attack)].join(',');
    const samples = await during;
    const after = rssMb(pid);
    rows.push({ attack: `B: 30 anonymous x ${ANON_MB} MB`, rssBeforeMb: rssBefore, rssPeakMb: peak, rssAfterMb: after, growthMb: Math.max(peak, after) - rssBefore, statuses, p50IdleMs: median(idle), p50DuringMs: median(samples), ratio: median(samples) / median(idle) });
  }

  const rssMb0 = rssMb(pid);
  prober.stop();
  (client as unknown as grpc.Client).close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });

  const f = (n: number) => n.toFixed(1);
  console.log(`server RSS at start ${f(before)} MB; unrelated request GET /api/version, median idle ${f(median(idle))} ms`);
  console.log('| attack | RSS before | peak | after | growth in the attack | stream status | /api/version p50 during | during / idle |');
  console.log('|---|---:|---:|---:|---:|---|---:|---:|');
  for (const r of rows) console.log(`| ${r.attack} | ${f(r.rssBeforeMb)} MB | ${f(r.rssPeakMb)} MB | ${f(r.rssAfterMb)} MB | ${f(r.growthMb)} MB | ${r.statuses} | ${f(r.p50DuringMs)} ms | ${r.ratio.toFixed(2)} |`);
  console.log(`RSS at the end ${f(rssMb0)} MB: ${f(rssMb0 - before)} MB over the start after all ${rows.length} attacks`);
  const goal = rows.every((r) => r.growthMb < 100);
  console.log(`goal (growth < 100 MB under every attack): ${goal ? 'met' : 'NOT met'}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/bes-attacks.json', JSON.stringify({ quick, rssStartMb: before, rssEndMb: rssMb0, idleP50Ms: median(idle), rows, goal }, null, 2));
}

main().catch((e: unknown) => {
  console.error(`bench/bes-attacks: ${(e as Error).message}`);
  process.exit(1);
});
