// The cache node's Bazel gRPC cache against its own HTTP path and nginx, in the same run, on
// loopback: 10 KiB blobs read with `ContentAddressableStorage.BatchReadBlobs` (blobs/s; batches
// of 10, as Bazel batches small downloads, and of 1) against `GET /cas/{hash}` of the node and of
// nginx serving the same files from disk (autocannon); and 10 MiB blobs read with
// `ByteStream.Read` (MB/s) against streaming GETs of the same two. Node and peers alternate,
// `rounds` times each, and the best round of each counts (the machine is shared).
//
// Two gRPC clients: a lean one (node:http2 sessions sending the gRPC frames themselves: little
// work per call and per byte, as Bazel's grpc-java client on Netty, so the rates are the
// server's) and grpc-js's own, whose per-call and per-byte work on the same two cores sets its
// pace (rows "grpc-js client"). And a floor: a bare grpc-js server in a process of its own,
// answering the same blobs from memory with the node's chunk size and nothing else (no access
// check, no disk, no store): what grpc-js and Node's HTTP/2 cost by themselves.
//
//   node --import tsx bench/cache-node-bazel.ts [--quick] [--duration S] [--connections C] [--window BYTES]
//
// Goal: the gRPC rates at least 0.8x of the node's HTTP path for the same blobs. Writes
// bench/results/cache-node-bazel.json.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect, createServer as createHttp2Server, type ClientHttp2Session } from 'node:http2';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import autocannon from 'autocannon';
import protobuf from 'protobufjs';
import { READ_CHUNK } from '../src/cache-node/grpc-bytestream.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const measuredSeconds = Number(value('--duration') ?? (quick ? 3 : 8));
/** Seconds of each run: 1 during the warm-up (V8 compiles every path of every server before the rounds). */
let duration = measuredSeconds;
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
  /** The same per CPU-second of this process: the client's cost. */
  blobsPerClientCpuSec?: number;
  mbPerClientCpuSec?: number;
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

/** One gRPC call of a client connection: its outcome and the bytes of its response messages. */
type Caller = (path: string, request: Buffer, streaming: boolean) => Promise<{ ok: boolean; bytes: number }>;

function grpcJsCaller(client: grpc.Client): Caller {
  return (path, request, streaming) =>
    new Promise((resolve) => {
      if (!streaming) {
        client.makeUnaryRequest(path, raw, raw, request, (err, res) => resolve({ ok: !err && res !== undefined, bytes: res?.length ?? 0 }));
        return;
      }
      let bytes = 0;
      const call = client.makeServerStreamRequest(path, raw, raw, request);
      call.on('data', (m: Buffer) => (bytes += m.length));
      call.on('error', () => resolve({ ok: false, bytes }));
      call.on('end', () => resolve({ ok: true, bytes }));
    });
}

/**
 * A lean gRPC client: an HTTP/2 session with Bazel's 1 MiB receive window (stream and
 * connection) and the default 16 KiB frames, sending the length-prefixed message and reading the
 * `grpc-status` of the trailers; response bytes are counted, not decoded.
 */
async function leanCallers(address: string, conns: number): Promise<{ callers: Caller[]; close(): void }> {
  const sessions = await Promise.all(
    Array.from(
      { length: conns },
      () =>
        new Promise<ClientHttp2Session>((resolve, reject) => {
          const session = connect(`http://${address}`, { settings: { initialWindowSize: FLOW_CONTROL_WINDOW } });
          session.once('connect', () => {
            session.setLocalWindowSize(FLOW_CONTROL_WINDOW);
            resolve(session);
          });
          session.once('error', reject);
        }),
    ),
  );
  const callers = sessions.map(
    (session): Caller =>
      (path, request) =>
        new Promise((resolve) => {
          const framed = Buffer.alloc(5 + request.length);
          framed.writeUInt32BE(request.length, 1);
          request.copy(framed, 5);
          const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
          let bytes = 0;
          let status: unknown;
          req.on('response', (headers) => (status = headers['grpc-status'] ?? status));
          req.on('trailers', (trailers) => (status = trailers['grpc-status']));
          req.on('data', (chunk: Buffer) => (bytes += chunk.length));
          req.on('close', () => resolve({ ok: String(status) === '0', bytes }));
          req.on('error', () => undefined);
          req.end(framed);
        }),
  );
  return { callers, close: () => sessions.forEach((s) => s.close()) };
}

const BATCH_READ = '/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs';
const BYTESTREAM_READ = '/google.bytestream.ByteStream/Read';

async function grpcBatch(scenario: string, target: string, callers: Caller[], blobs: readonly Blob[], perBatch: number): Promise<Row> {
  let bytes = 0;
  let failures = 0;
  const latencies: number[] = [];
  const requests = Array.from({ length: blobs.length }, (_, i) => encodeBatchRead(Array.from({ length: perBatch }, (_, j) => blobs[(i + j) % blobs.length]!)));
  const started = Date.now();
  const end = started + duration * 1000;
  await Promise.all(
    callers.map(async (call, c) => {
      for (let i = c; Date.now() < end; i++) {
        const t0 = performance.now();
        const r = await call(BATCH_READ, requests[i % requests.length]!, false);
        if (!r.ok) failures++;
        bytes += r.bytes;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return summarize(scenario, target, latencies, bytes, (Date.now() - started) / 1000, failures, perBatch);
}

async function grpcByteStream(scenario: string, target: string, callers: Caller[], blobs: readonly Blob[]): Promise<Row> {
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
    callers.map(async (call, c) => {
      for (let i = c; Date.now() < end; i++) {
        const t0 = performance.now();
        const r = await call(BYTESTREAM_READ, requests[i % requests.length]!, true);
        bytes += r.bytes;
        if (!r.ok) failures++;
        else latencies.push(performance.now() - t0);
      }
    }),
  );
  return summarize(scenario, target, latencies, bytes, (Date.now() - started) / 1000, failures, 1);
}

// ---- the floor: a bare grpc-js server ----------------------------------------------------------

/**
 * Serves BatchReadBlobs and ByteStream.Read of the blobs in `files` from memory, encoded once at
 * start (ReadResponse messages of `chunk` bytes, as the node sends them); prints its port.
 */
async function bareServer(files: string, chunk: number): Promise<void> {
  const entries = new Map<string, Buffer>();
  const reads = new Map<string, Buffer[]>();
  for (const hash of readdirSync(files)) {
    const data = readFileSync(join(files, hash));
    const w = protobuf.Writer.create();
    w.uint32(10).fork().uint32(10).fork().uint32(10).string(hash).uint32(16).int64(data.length).ldelim().uint32(18).bytes(data).uint32(26).fork().ldelim().ldelim();
    entries.set(hash, Buffer.from(w.finish()));
    const messages: Buffer[] = [];
    for (let at = 0; at < data.length; at += chunk) messages.push(Buffer.from(protobuf.Writer.create().uint32(10).bytes(data.subarray(at, at + chunk)).finish()));
    reads.set(hash, messages);
  }
  const server = new grpc.Server({ 'grpc.max_send_message_length': 16 * 1024 * 1024 });
  const def = (path: string, responseStream: boolean) => ({ path, requestStream: false, responseStream, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw });
  server.addService(
    { BatchReadBlobs: def(BATCH_READ, false), Read: def(BYTESTREAM_READ, true) },
    {
      BatchReadBlobs(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
        const hashes = [...call.request.toString('latin1').matchAll(/[0-9a-f]{64}/g)].map((m) => m[0]);
        callback(null, Buffer.concat(hashes.map((h) => entries.get(h) ?? Buffer.alloc(0))));
      },
      Read(call: grpc.ServerWritableStream<Buffer, Buffer>) {
        const hash = /blobs\/([0-9a-f]{64})\//.exec(call.request.toString('latin1'))?.[1];
        const messages = reads.get(hash ?? '');
        if (!messages) return void call.emit('error', { code: grpc.status.NOT_FOUND, details: 'no such blob' });
        let i = 0;
        const pump = () => {
          while (i < messages.length) if (!call.write(messages[i++]!)) return void call.once('drain', pump);
          call.end();
        };
        pump();
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  // Below grpc-js: Node's HTTP/2 alone writing the same messages, framed for gRPC once at start.
  const framedReads = new Map([...reads].map(([hash, messages]) => [hash, messages.map((m) => Buffer.concat([Buffer.from([0, ...[24, 16, 8, 0].map((b) => (m.length >>> b) & 0xff)]), m]))]));
  const h2 = createHttp2Server();
  h2.on('stream', (stream) => {
    const parts: Buffer[] = [];
    stream.on('data', (c: Buffer) => parts.push(c));
    stream.on('end', () => {
      const hash = /blobs\/([0-9a-f]{64})\//.exec(Buffer.concat(parts).toString('latin1'))?.[1];
      const framed = framedReads.get(hash ?? '') ?? [];
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': framed.length > 0 ? '0' : String(grpc.status.NOT_FOUND) }));
      let i = 0;
      const pump = () => {
        while (i < framed.length) if (!stream.write(framed[i++]!)) return void stream.once('drain', pump);
        stream.end();
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`listening ${port} ${(h2.address() as { port: number }).port}\n`);
}

function startBare(files: string): Promise<{ child: ChildProcess; address: string; http2Address: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', process.argv[1]!, '--bare-grpc-server', files, String(READ_CHUNK)], { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening (\d+) (\d+)/.exec(d.toString());
      if (m) resolve({ child, address: `127.0.0.1:${m[1]}`, http2Address: `127.0.0.1:${m[2]}` });
    });
    child.once('exit', (code) => reject(new Error(`the bare gRPC server exited with ${code}`)));
  });
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
  const bare = await startBare(files);
  const grpcAddress = node.grpcUrl.replace(/^grpc:\/\//, '');
  const smallClients = grpcClients(grpcAddress, connections);
  const largeClients = grpcClients(grpcAddress, Math.min(connections, 4));
  const leanSmall = await leanCallers(grpcAddress, connections);
  const leanLarge = await leanCallers(grpcAddress, largeClients.length);
  const bareSmall = await leanCallers(bare.address, connections);
  const bareLarge = await leanCallers(bare.address, largeClients.length);
  const bareHttp2Large = await leanCallers(bare.http2Address, largeClients.length);
  try {
    process.stderr.write(`filling the node: ${SMALL_KEYS} x 10 KiB, ${LARGE_KEYS} x 10 MiB...\n`);
    for (const b of [...small, ...large]) {
      const r = await fetch(`${node.url}/cas/${b.hash}`, { method: 'PUT', body: new Uint8Array(b.data) });
      if (r.status !== 204) throw new Error(`PUT failed: ${r.status}`);
    }
    // Every path answers the same bytes.
    for (const address of [grpcAddress, bare.address]) {
      const client = grpcClients(address, 1)[0]!;
      const [check] = await new Promise<{ data: Buffer; code: number }[]>((resolve, reject) =>
        client.makeUnaryRequest(BATCH_READ, raw, raw, encodeBatchRead([small[0]!]), (e, res) => (e ? reject(e) : resolve(decodeBatchRead(res!)))),
      );
      const parts: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        const w = protobuf.Writer.create().uint32(10).string(`blobs/${large[0]!.hash}/${LARGE}`);
        const call = client.makeServerStreamRequest(BYTESTREAM_READ, raw, raw, Buffer.from(w.finish()));
        call.on('data', (m: Buffer) => {
          const r = protobuf.Reader.create(m);
          r.uint32();
          parts.push(Buffer.from(r.bytes()));
        });
        call.on('error', reject);
        call.on('end', resolve);
      });
      client.close();
      if (check?.code !== 0 || !check.data.equals(small[0]!.data)) throw new Error(`BatchReadBlobs of ${address} did not answer the blob`);
      if (!Buffer.concat(parts).equals(large[0]!.data)) throw new Error(`ByteStream.Read of ${address} did not answer the blob`);
    }
    for (const base of [node.url, nginx.url]) {
      const body = Buffer.from(await (await fetch(`${base}/cas/${small[1]!.hash}`)).arrayBuffer());
      if (!body.equals(small[1]!.data)) throw new Error(`${base} did not answer the blob (${body.length} bytes: ${body.subarray(0, 200).toString()})`);
    }

    type Run = () => Promise<Row>;
    const nodePid = () => [node.child.pid!];
    const barePid = () => [bare.child.pid!];
    const grpcJsSmall = smallClients.map(grpcJsCaller);
    const grpcJsLarge = largeClients.map(grpcJsCaller);
    const T = {
      batch10: 'node, gRPC BatchReadBlobs (10 per batch)',
      batch1: 'node, gRPC BatchReadBlobs (1 per batch)',
      batch10GrpcJs: 'node, gRPC BatchReadBlobs (10 per batch), grpc-js client',
      bareBatch10: 'bare grpc-js server from memory, BatchReadBlobs (10 per batch)',
      http: 'node, HTTP GET /cas/',
      nginx: 'nginx, GET of the same files',
      byteStream: 'node, gRPC ByteStream.Read',
      byteStreamGrpcJs: 'node, gRPC ByteStream.Read, grpc-js client',
      bareByteStream: 'bare grpc-js server from memory, ByteStream.Read',
      bareHttp2ByteStream: 'bare node:http2 server from memory, the same messages (no grpc-js)',
    } as const;
    const SMALL_S = '10 KiB blobs';
    const LARGE_S = '10 MiB blobs';
    const scenarios: { name: string; targets: [string, () => number[], Run][] }[] = [
      {
        name: SMALL_S,
        targets: [
          [T.batch10, nodePid, () => grpcBatch(SMALL_S, T.batch10, leanSmall.callers, small, 10)],
          [T.batch1, nodePid, () => grpcBatch(SMALL_S, T.batch1, leanSmall.callers, small, 1)],
          [T.batch10GrpcJs, nodePid, () => grpcBatch(SMALL_S, T.batch10GrpcJs, grpcJsSmall, small, 10)],
          [T.bareBatch10, barePid, () => grpcBatch(SMALL_S, T.bareBatch10, bareSmall.callers, small, 10)],
          [T.http, nodePid, () => httpSmall(SMALL_S, T.http, node.url, small, connections)],
          [T.nginx, nginx.pid, () => httpSmall(SMALL_S, T.nginx, nginx.url, small, connections)],
        ],
      },
      {
        name: LARGE_S,
        targets: [
          [T.byteStream, nodePid, () => grpcByteStream(LARGE_S, T.byteStream, leanLarge.callers, large)],
          [T.byteStreamGrpcJs, nodePid, () => grpcByteStream(LARGE_S, T.byteStreamGrpcJs, grpcJsLarge, large)],
          [T.bareByteStream, barePid, () => grpcByteStream(LARGE_S, T.bareByteStream, bareLarge.callers, large)],
          [T.bareHttp2ByteStream, barePid, () => grpcByteStream(LARGE_S, T.bareHttp2ByteStream, bareHttp2Large.callers, large)],
          [T.http, nodePid, () => httpLarge(LARGE_S, T.http, node.url, large, largeClients.length)],
          [T.nginx, nginx.pid, () => httpLarge(LARGE_S, T.nginx, nginx.url, large, largeClients.length)],
        ],
      },
    ];
    const rows: Row[] = [];
    const everyRound: (Row & { round: number })[] = [];
    for (const s of scenarios) {
      const best = new Map<string, Row>();
      process.stderr.write(`${s.name}: warming up every target (1 s each)...\n`);
      duration = 1;
      for (const [, , run] of s.targets) await run();
      duration = measuredSeconds;
      for (let round = 0; round < rounds; round++) {
        for (const [target, pids, run] of s.targets) {
          process.stderr.write(`${s.name}: ${target}, round ${round + 1}/${rounds} (${duration} s)...\n`);
          const cpu0 = cpuSeconds(pids());
          const client0 = process.cpuUsage();
          const row = await run();
          const cpu = cpuSeconds(pids()) - cpu0;
          const clientUsage = process.cpuUsage(client0);
          const clientCpu = (clientUsage.user + clientUsage.system) / 1e6;
          row.blobsPerCpuSec = Math.round((row.blobsPerSec * duration) / cpu);
          row.mbPerCpuSec = Math.round((row.mbPerSec * duration) / cpu);
          row.blobsPerClientCpuSec = Math.round((row.blobsPerSec * duration) / clientCpu);
          row.mbPerClientCpuSec = Math.round((row.mbPerSec * duration) / clientCpu);
          everyRound.push({ ...row, round: round + 1 });
          const previous = best.get(target);
          const score = (r: Row) => (s.name === LARGE_S ? r.mbPerSec : r.blobsPerSec);
          if (!previous || score(row) > score(previous)) best.set(target, row);
        }
      }
      rows.push(...best.values());
    }
    const find = (scenario: string, target: string) => rows.find((r) => r.scenario === scenario && r.target === target)!;
    const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 100) / 100;
    const small_ = (t: string) => find(SMALL_S, t);
    const large_ = (t: string) => find(LARGE_S, t);
    const ratios = {
      batchRead10VsHttp: ratio(small_(T.batch10).blobsPerSec, small_(T.http).blobsPerSec),
      batchRead1VsHttp: ratio(small_(T.batch1).blobsPerSec, small_(T.http).blobsPerSec),
      batchRead10GrpcJsVsHttp: ratio(small_(T.batch10GrpcJs).blobsPerSec, small_(T.http).blobsPerSec),
      bareBatchRead10VsHttp: ratio(small_(T.bareBatch10).blobsPerSec, small_(T.http).blobsPerSec),
      batchRead10VsNginx: ratio(small_(T.batch10).blobsPerSec, small_(T.nginx).blobsPerSec),
      httpVsNginxSmall: ratio(small_(T.http).blobsPerSec, small_(T.nginx).blobsPerSec),
      batchRead10VsHttpPerServerCpu: ratio(small_(T.batch10).blobsPerCpuSec!, small_(T.http).blobsPerCpuSec!),
      byteStreamVsHttp: ratio(large_(T.byteStream).mbPerSec, large_(T.http).mbPerSec),
      byteStreamGrpcJsVsHttp: ratio(large_(T.byteStreamGrpcJs).mbPerSec, large_(T.http).mbPerSec),
      bareByteStreamVsHttp: ratio(large_(T.bareByteStream).mbPerSec, large_(T.http).mbPerSec),
      byteStreamVsBare: ratio(large_(T.byteStream).mbPerSec, large_(T.bareByteStream).mbPerSec),
      byteStreamVsNginx: ratio(large_(T.byteStream).mbPerSec, large_(T.nginx).mbPerSec),
      httpVsNginxLarge: ratio(large_(T.http).mbPerSec, large_(T.nginx).mbPerSec),
      byteStreamVsHttpPerServerCpu: ratio(large_(T.byteStream).mbPerCpuSec!, large_(T.http).mbPerCpuSec!),
      bareByteStreamVsHttpPerServerCpu: ratio(large_(T.bareByteStream).mbPerCpuSec!, large_(T.http).mbPerCpuSec!),
      bareHttp2VsHttp: ratio(large_(T.bareHttp2ByteStream).mbPerSec, large_(T.http).mbPerSec),
      bareHttp2VsHttpPerServerCpu: ratio(large_(T.bareHttp2ByteStream).mbPerCpuSec!, large_(T.http).mbPerCpuSec!),
    };
    const goals = { batchReadAtLeast08xHttp: ratios.batchRead10VsHttp >= 0.8, byteStreamAtLeast08xHttp: ratios.byteStreamVsHttp >= 0.8 };
    console.log(`\nReadResponse chunk: ${READ_CHUNK} bytes; ${rounds} rounds of ${duration} s per target, the best round of each`);
    console.log('\n| blobs | target | blobs/s | MB/s | blobs per server CPU-s | MB per server CPU-s | MB per client CPU-s | p50 ms | p99 ms | failures |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.scenario} | ${r.target} | ${r.blobsPerSec} | ${r.mbPerSec} | ${r.blobsPerCpuSec} | ${r.mbPerCpuSec} | ${r.mbPerClientCpuSec} | ${r.p50} | ${r.p99} | ${r.failures} |`);
    const loadAverage = readFileSync('/proc/loadavg', 'utf8').trim();
    console.log(`\nload average during the run: ${loadAverage.split(' ').slice(0, 3).join(' ')}`);
    console.log(
      `gRPC/HTTP of the node: BatchReadBlobs ${ratios.batchRead10VsHttp}x (10 per batch; grpc-js client ${ratios.batchRead10GrpcJsVsHttp}x; per server CPU-s ${ratios.batchRead10VsHttpPerServerCpu}x), ${ratios.batchRead1VsHttp}x (1 per batch); ` +
        `ByteStream.Read ${ratios.byteStreamVsHttp}x (grpc-js client ${ratios.byteStreamGrpcJsVsHttp}x; per server CPU-s ${ratios.byteStreamVsHttpPerServerCpu}x)` +
        `\nthe bare grpc-js server from memory / the node's HTTP path: BatchReadBlobs ${ratios.bareBatchRead10VsHttp}x, ByteStream.Read ${ratios.bareByteStreamVsHttp}x (per server CPU-s ${ratios.bareByteStreamVsHttpPerServerCpu}x); the node's ByteStream.Read / the bare server ${ratios.byteStreamVsBare}x; bare node:http2 without grpc-js / the node's HTTP path ${ratios.bareHttp2VsHttp}x (per server CPU-s ${ratios.bareHttp2VsHttpPerServerCpu}x)` +
        `\nagainst nginx: BatchReadBlobs ${ratios.batchRead10VsNginx}x, ByteStream.Read ${ratios.byteStreamVsNginx}x; the node's HTTP path ${ratios.httpVsNginxSmall}x (10 KiB), ${ratios.httpVsNginxLarge}x (10 MiB)`,
    );
    console.log(`goal >= 0.8x of the HTTP path: BatchReadBlobs ${goals.batchReadAtLeast08xHttp ? 'met' : 'not met'}; ByteStream.Read ${goals.byteStreamAtLeast08xHttp ? 'met' : 'not met'}`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/cache-node-bazel.json',
      `${JSON.stringify({ date: new Date().toISOString(), quick, durationSecs: duration, connections, rounds, readChunkBytes: READ_CHUNK, loadAverage, rows, ratios, goals, everyRound }, null, 2)}\n`,
    );
  } finally {
    for (const c of [...smallClients, ...largeClients]) c.close();
    for (const l of [leanSmall, leanLarge, bareSmall, bareLarge, bareHttp2Large]) l.close();
    node.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    nginx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (argv[0] === '--bare-grpc-server') await bareServer(argv[1]!, Number(argv[2]));
else await main();
