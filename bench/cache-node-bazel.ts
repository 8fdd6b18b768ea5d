// The cache node's Bazel gRPC cache against its own HTTP path and nginx, in the same run, on
// loopback: 10 KiB blobs read with `ContentAddressableStorage.BatchReadBlobs` (blobs/s; batches
// of 10, as Bazel batches small downloads, and of 1) against `GET /cas/{hash}` of the node and of
// nginx serving the same files from disk (autocannon); and 10 MiB blobs read with
// `ByteStream.Read` (MB/s) against streaming GETs of the same two. Node and peers alternate,
// `rounds` times each, and the best round of each counts (the machine is shared).
//
//   node --import tsx bench/cache-node-bazel.ts [--quick] [--duration S] [--connections C]
//
// Goal: the gRPC rates at least 0.8x of the node's HTTP path for the same blobs. Writes
// bench/results/cache-node-bazel.json.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import autocannon from 'autocannon';
import protobuf from 'protobufjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const duration = Number(value('--duration') ?? (quick ? 3 : 8));
const connections = Number(value('--connections') ?? 10);
const rounds = quick ? 2 : 3;
const SMALL = 10 * 1024;
const LARGE = 10 * 1024 * 1024;
const SMALL_KEYS = 100;
const LARGE_KEYS = 4;
const FLOW_CONTROL_WINDOW = Number(value('--window') ?? 1024 * 1024);

/** 7-bit random content (autocannon decodes bodies as text; see bench/cache-node.ts). */
function content(size: number): Buffer {
  const b = randomBytes(size);
  for (let i = 0; i < b.length; i++) b[i] = 0x20 + (b[i]! % 95);
  return b;
}

interface Blob {
  readonly hash: string;
  readonly data: Buffer;
}
const blobOf = (data: Buffer): Blob => ({ hash: createHash('sha256').update(data).digest('hex'), data });

function startNode(args: string[]): Promise<{ child: ChildProcess; url: string; grpcUrl: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info', NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let buf = '';
    child.stderr!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        if (!line.includes('"cache node listening"')) continue;
        const l = JSON.parse(line) as { url: string; grpcUrl: string };
        resolve({ child, url: l.url, grpcUrl: l.grpcUrl });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${buf}`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** nginx serving `dir` at /cas/, one worker (the node is one process too), sendfile on. */
async function startNginx(dir: string, files: string): Promise<{ url: string; pid: () => number[]; stop: () => void }> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'nginx-error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${join(dir, 'nginx-body')};
  proxy_temp_path ${join(dir, 'nginx-proxy')};
  fastcgi_temp_path ${join(dir, 'nginx-fastcgi')};
  uwsgi_temp_path ${join(dir, 'nginx-uwsgi')};
  scgi_temp_path ${join(dir, 'nginx-scgi')};
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    location /cas/ { alias ${files}/; }
  }
}
`,
  );
  const r = spawnSync('nginx', ['-c', conf, '-p', dir, '-q'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nginx did not start: ${r.stderr}`);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${url}/cas/none`).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  const master = Number(readFileSync(join(dir, 'nginx.pid'), 'utf8').trim());
  const pid = (): number[] => {
    let children: number[] = [];
    try {
      children = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      // no children listed
    }
    return [master, ...children];
  };
  return { url, pid, stop: () => void spawnSync('nginx', ['-c', conf, '-p', dir, '-s', 'stop']) };
}

/** CPU seconds used by processes (Linux /proc; user + system). */
function cpuSeconds(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return Number.NaN;
    }
  }
  return total;
}

interface Row {
  readonly scenario: string;
  readonly target: string;
  /** Blobs read per second (a batch of 10 counts 10). */
  readonly blobsPerSec: number;
  readonly mbPerSec: number;
  blobsPerCpuSec?: number;
  mbPerCpuSec?: number;
  readonly p50: number;
  readonly p99: number;
  readonly failures: number;
}

// ---- HTTP --------------------------------------------------------------------------------------

async function httpSmall(scenario: string, target: string, base: string, blobs: readonly Blob[], conns: number): Promise<Row> {
  const result = await autocannon({ url: base, connections: conns, duration, requests: blobs.map((b) => ({ method: 'GET' as const, path: `/cas/${b.hash}` })) });
  return {
    scenario,
    target,
    blobsPerSec: Math.round(result.requests.average),
    mbPerSec: Math.round(result.throughput.average / 1e6),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors,
  };
}

/** Streaming node:http clients over keep-alive connections, discarding the bodies (see bench/cache-node.ts). */
async function httpLarge(scenario: string, target: string, base: string, blobs: readonly Blob[], conns: number): Promise<Row> {
  const agent = new Agent({ keepAlive: true, maxSockets: conns });
  let bytes = 0;
  let failures = 0;
  const latencies: number[] = [];
  const one = (path: string) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      get(`${base}${path}`, { agent }, (res) => {
        if (res.statusCode !== 200) failures++;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          resolve();
        });
      }).on('error', () => {
        failures++;
        resolve();
      });
    });
  const started = Date.now();
  const end = started + duration * 1000;
  await Promise.all(Array.from({ length: conns }, async (_, c) => {
    for (let i = c; Date.now() < end; i++) await one(`/cas/${blobs[i % blobs.length]!.hash}`);
  }));
  const secs = (Date.now() - started) / 1000;
  agent.destroy();
  return summarize(scenario, target, latencies, bytes, secs, failures, 1);
}

function summarize(scenario: string, target: string, latencies: number[], bytes: number, secs: number, failures: number, perCall: number): Row {
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
  return { scenario, target, blobsPerSec: Math.round((latencies.length * perCall) / secs), mbPerSec: Math.round(bytes / secs / 1e6), p50: pct(0.5), p99: pct(0.99), failures };
}

// ---- gRPC ----------------------------------------------------------------------------------------

/**
 * One channel per client connection (grpc-js would otherwise share one subchannel among them),
 * with the HTTP/2 receive window Bazel's gRPC client (grpc-java on Netty) opens: 1 MiB. (grpc-js's
 * own default is HTTP/2's 64 KiB, which would make the client, not the node, the limit.)
 */
function grpcClients(address: string, conns: number): grpc.Client[] {
  return Array.from(
    { length: conns },
    () => new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW }),
  );
}

function encodeBatchRead(blobs: readonly Blob[]): Buffer {
  const w = protobuf.Writer.create();
  for (const b of blobs) w.uint32(18).fork().uint32(10).string(b.hash).uint32(16).int64(b.data.length).ldelim();
  return Buffer.from(w.finish());
}

/** The bytes of each blob of a BatchReadBlobsResponse and its status codes (for the check; the bench counts the message's bytes). */
function decodeBatchRead(bytes: Buffer): { data: Buffer; code: number }[] {
  const out: { data: Buffer; code: number }[] = [];
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag !== 10) {
      r.skipType(tag & 7);
      continue;
    }
    const end = r.uint32() + r.pos;
    let data = Buffer.alloc(0);
    let code = 0;
    while (r.pos < end) {
      const t = r.uint32();
      if (t === 18) data = Buffer.from(r.bytes());
      else if (t === 26) {
        const s = protobuf.Reader.create(r.bytes());
        while (s.pos < s.len) {
          const st = s.uint32();
          if (st === 8) code = s.int32();
          else s.skipType(st & 7);
        }
      } else r.skipType(t & 7);
    }
    out.push({ data, code });
  }
  return out;
}

const raw = (b: Buffer) => b;

async function grpcBatch(scenario: string, target: string, clients: grpc.Client[], blobs: readonly Blob[], perBatch: number): Promise<Row> {
  let bytes = 0;
  let failures = 0;
  const latencies: number[] = [];
  const requests = Array.from({ length: blobs.length }, (_, i) => encodeBatchRead(Array.from({ length: perBatch }, (_, j) => blobs[(i + j) % blobs.length]!)));
  const started = Date.now();
  const end = started + duration * 1000;
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = c; Date.now() < end; i++) {
        const t0 = performance.now();
        await new Promise<void>((resolve) => {
          client.makeUnaryRequest('/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs', raw, raw, requests[i % requests.length]!, (err, res) => {
            if (err || !res) failures++;
            else bytes += res.length;
            latencies.push(performance.now() - t0);
            resolve();
          });
        });
      }
    }),
  );
  return summarize(scenario, target, latencies, bytes, (Date.now() - started) / 1000, failures, perBatch);
}

async function grpcByteStream(scenario: string, target: string, clients: grpc.Client[], blobs: readonly Blob[]): Promise<Row> {
  let bytes = 0;
  let failures = 0;
  const latencies: number[] = [];
  const requests = blobs.map((b) => {
    const w = protobuf.Writer.create();
    w.uint32(10).string(`blobs/${b.hash}/${b.data.length}`);
    return Buffer.from(w.finish());
  });
  const started = Date.now();
  const end = started + duration * 1000;
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = c; Date.now() < end; i++) {
        const t0 = performance.now();
        await new Promise<void>((resolve) => {
          const call = client.makeServerStreamRequest('/google.bytestream.ByteStream/Read', raw, raw, requests[i % requests.length]!);
          call.on('data', (m: Buffer) => (bytes += m.length));
          call.on('error', () => {
            failures++;
            resolve();
          });
          call.on('end', () => {
            latencies.push(performance.now() - t0);
            resolve();
          });
        });
      }
    }),
  );
  return summarize(scenario, target, latencies, bytes, (Date.now() - started) / 1000, failures, 1);
}

// ---- the run -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-bench-cache-node-bazel-'));
  const config = join(dir, 'node.json');
  writeFileSync(config, JSON.stringify({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, maxArtifactSize: 20, targetSize: { type: 'fixed', size: 1024 } }, uiAccess: { type: 'disabled' } }));
  mkdirSync(join(dir, 'data'));
  const files = join(dir, 'files');
  mkdirSync(files);
  const small = Array.from({ length: SMALL_KEYS }, () => blobOf(content(SMALL)));
  const large = Array.from({ length: LARGE_KEYS }, () => blobOf(content(LARGE)));
  for (const b of [...small, ...large]) writeFileSync(join(files, b.hash), b.data);
  const node = await startNode(['--import', 'tsx', 'src/cli/run.ts', 'cache-node', '--config', config, '--port', '0', '--grpc-port', '0', '--data', join(dir, 'data')]);
  const nginx = await startNginx(dir, files);
  const grpcAddress = node.grpcUrl.replace(/^grpc:\/\//, '');
  const smallClients = grpcClients(grpcAddress, connections);
  const largeClients = grpcClients(grpcAddress, Math.min(connections, 4));
  try {
    process.stderr.write(`filling the node: ${SMALL_KEYS} x 10 KiB, ${LARGE_KEYS} x 10 MiB...\n`);
    for (const b of [...small, ...large]) {
      const r = await fetch(`${node.url}/cas/${b.hash}`, { method: 'PUT', body: new Uint8Array(b.data) });
      if (r.status !== 204) throw new Error(`PUT failed: ${r.status}`);
    }
    // Every path answers the same bytes.
    const [check] = await new Promise<{ data: Buffer; code: number }[]>((resolve, reject) =>
      smallClients[0]!.makeUnaryRequest('/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs', raw, raw, encodeBatchRead([small[0]!]), (e, res) => (e ? reject(e) : resolve(decodeBatchRead(res!)))),
    );
    if (check?.code !== 0 || !check.data.equals(small[0]!.data)) throw new Error('BatchReadBlobs did not answer the blob');
    for (const base of [node.url, nginx.url]) {
      const body = Buffer.from(await (await fetch(`${base}/cas/${small[1]!.hash}`)).arrayBuffer());
      if (!body.equals(small[1]!.data)) throw new Error(`${base} did not answer the blob (${body.length} bytes: ${body.subarray(0, 200).toString()})`);
    }

    type Run = () => Promise<Row>;
    const nodePid = () => [node.child.pid!];
    const scenarios: { name: string; targets: [string, () => number[], Run][] }[] = [
      {
        name: '10 KiB blobs',
        targets: [
          ['node, gRPC BatchReadBlobs (10 per batch)', nodePid, () => grpcBatch('10 KiB blobs', 'node, gRPC BatchReadBlobs (10 per batch)', smallClients, small, 10)],
          ['node, gRPC BatchReadBlobs (1 per batch)', nodePid, () => grpcBatch('10 KiB blobs', 'node, gRPC BatchReadBlobs (1 per batch)', smallClients, small, 1)],
          ['node, HTTP GET /cas/', nodePid, () => httpSmall('10 KiB blobs', 'node, HTTP GET /cas/', node.url, small, connections)],
          ['nginx, GET of the same files', nginx.pid, () => httpSmall('10 KiB blobs', 'nginx, GET of the same files', nginx.url, small, connections)],
        ],
      },
      {
        name: '10 MiB blobs',
        targets: [
          ['node, gRPC ByteStream.Read', nodePid, () => grpcByteStream('10 MiB blobs', 'node, gRPC ByteStream.Read', largeClients, large)],
          ['node, HTTP GET /cas/', nodePid, () => httpLarge('10 MiB blobs', 'node, HTTP GET /cas/', node.url, large, largeClients.length)],
          ['nginx, GET of the same files', nginx.pid, () => httpLarge('10 MiB blobs', 'nginx, GET of the same files', nginx.url, large, largeClients.length)],
        ],
      },
    ];
    const rows: Row[] = [];
    for (const s of scenarios) {
      const best = new Map<string, Row>();
      for (let round = 0; round < rounds; round++) {
        for (const [target, pids, run] of s.targets) {
          process.stderr.write(`${s.name}: ${target}, round ${round + 1}/${rounds} (${duration} s)...\n`);
          const cpu0 = cpuSeconds(pids());
          const row = await run();
          const cpu = cpuSeconds(pids()) - cpu0;
          row.blobsPerCpuSec = Math.round((row.blobsPerSec * duration) / cpu);
          row.mbPerCpuSec = Math.round((row.mbPerSec * duration) / cpu);
          const previous = best.get(target);
          const score = (r: Row) => (s.name.startsWith('10 MiB') ? r.mbPerSec : r.blobsPerSec);
          if (!previous || score(row) > score(previous)) best.set(target, row);
        }
      }
      rows.push(...best.values());
    }
    const find = (scenario: string, target: string) => rows.find((r) => r.scenario === scenario && r.target === target)!;
    const batch10 = find('10 KiB blobs', 'node, gRPC BatchReadBlobs (10 per batch)');
    const batch1 = find('10 KiB blobs', 'node, gRPC BatchReadBlobs (1 per batch)');
    const httpSmallRow = find('10 KiB blobs', 'node, HTTP GET /cas/');
    const nginxSmall = find('10 KiB blobs', 'nginx, GET of the same files');
    const bytestream = find('10 MiB blobs', 'node, gRPC ByteStream.Read');
    const httpLargeRow = find('10 MiB blobs', 'node, HTTP GET /cas/');
    const nginxLarge = find('10 MiB blobs', 'nginx, GET of the same files');
    const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 100) / 100;
    const ratios = {
      batchRead10VsHttp: ratio(batch10.blobsPerSec, httpSmallRow.blobsPerSec),
      batchRead1VsHttp: ratio(batch1.blobsPerSec, httpSmallRow.blobsPerSec),
      batchRead10VsNginx: ratio(batch10.blobsPerSec, nginxSmall.blobsPerSec),
      httpVsNginxSmall: ratio(httpSmallRow.blobsPerSec, nginxSmall.blobsPerSec),
      byteStreamVsHttp: ratio(bytestream.mbPerSec, httpLargeRow.mbPerSec),
      byteStreamVsNginx: ratio(bytestream.mbPerSec, nginxLarge.mbPerSec),
      httpVsNginxLarge: ratio(httpLargeRow.mbPerSec, nginxLarge.mbPerSec),
    };
    const goals = { batchReadAtLeast08xHttp: ratios.batchRead10VsHttp >= 0.8, byteStreamAtLeast08xHttp: ratios.byteStreamVsHttp >= 0.8 };
    console.log('\n| blobs | target | blobs/s | MB/s | blobs per server CPU-s | MB per server CPU-s | p50 ms | p99 ms | failures |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.scenario} | ${r.target} | ${r.blobsPerSec} | ${r.mbPerSec} | ${r.blobsPerCpuSec} | ${r.mbPerCpuSec} | ${r.p50} | ${r.p99} | ${r.failures} |`);
    const loadAverage = readFileSync('/proc/loadavg', 'utf8').trim();
    console.log(`\nload average during the run: ${loadAverage.split(' ').slice(0, 3).join(' ')}`);
    console.log(
      `gRPC/HTTP of the node: BatchReadBlobs ${ratios.batchRead10VsHttp}x (10 per batch), ${ratios.batchRead1VsHttp}x (1 per batch); ByteStream.Read ${ratios.byteStreamVsHttp}x` +
        `\nagainst nginx: BatchReadBlobs ${ratios.batchRead10VsNginx}x, ByteStream.Read ${ratios.byteStreamVsNginx}x; the node's HTTP path ${ratios.httpVsNginxSmall}x (10 KiB), ${ratios.httpVsNginxLarge}x (10 MiB)`,
    );
    console.log(`goal >= 0.8x of the HTTP path: BatchReadBlobs ${goals.batchReadAtLeast08xHttp ? 'met' : 'not met'}; ByteStream.Read ${goals.byteStreamAtLeast08xHttp ? 'met' : 'not met'}`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/cache-node-bazel.json', `${JSON.stringify({ date: new Date().toISOString(), quick, durationSecs: duration, connections, rounds, loadAverage, rows, ratios, goals }, null, 2)}\n`);
  } finally {
    for (const c of [...smallClients, ...largeClients]) c.close();
    node.child.kill('SIGTERM');
    nginx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
