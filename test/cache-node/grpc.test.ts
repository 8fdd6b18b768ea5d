// The Remote Execution API's cache over gRPC on 127.0.0.1, with a client built by
// @grpc/proto-loader from the node's .proto files (another codec than the node's own):
// capabilities per user level, the action cache's refusal of results naming absent content, the
// CAS batches, ByteStream reads and resumable writes of large blobs, digest verification, user
// levels, eviction never leaving a dangling action result, load shedding and the metrics.

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageType, PROTO_DIR, REAPI } from '../../src/cache-node/proto.js';
import { basic, fastHash, startTestNode, type TestNode } from './helpers.js';
import { actionKey, actionResult, blob, metric, type Blob } from './bazel-support.js';
import { waitFor } from '../support/wait.js';

const KiB = 1024;
const MiB = 1024 * KiB;

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Unary = (req: Any, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: Any) => void) => void;

const definition = protoLoader.loadSync(['remote_execution.proto', 'bytestream.proto'], { includeDirs: [PROTO_DIR], longs: Number, enums: String, defaults: true });
const pkg = grpc.loadPackageDefinition(definition) as Any;
const reapi = pkg['build']['bazel']['remote']['execution']['v2'];

describe('the Remote Execution API cache over gRPC', () => {
  let t: TestNode;
  let clients: { caps: Any; ac: Any; cas: Any; bs: Any };
  const md = (authorization?: string) => {
    const m = new grpc.Metadata();
    if (authorization) m.set('authorization', authorization);
    return m;
  };
  const ci = basic('ci', 'ci-password');
  const dev = basic('dev', 'dev-password');

  /** `authorization` null: an anonymous call. */
  function call(client: Any, name: string, req: Any, authorization: string | null = ci): Promise<Any> {
    return new Promise((resolve, reject) => (client[name] as Unary).call(client, req, md(authorization ?? undefined), (err, res) => (err ? reject(err) : resolve(res))));
  }
  async function refusal(p: Promise<unknown>): Promise<grpc.ServiceError> {
    try {
      await p;
    } catch (err) {
      return err as grpc.ServiceError;
    }
    throw new Error('the call succeeded');
  }
  const digest = (b: Blob) => ({ hash: b.hash, sizeBytes: b.size });

  /** A ByteStream write in chunks; `stopAfter` chunks then cancel (an interrupted upload). */
  function write(name: string, data: Buffer, opts: { chunk?: number; offset?: number; stopAfter?: number; authorization?: string } = {}): Promise<Any> {
    const chunk = opts.chunk ?? 64 * KiB;
    return new Promise((resolve, reject) => {
      const stream = clients.bs.Write(md(opts.authorization ?? ci), (err: grpc.ServiceError | null, res: Any) => (err ? reject(err) : resolve(res)));
      let offset = opts.offset ?? 0;
      let sent = 0;
      const pump = () => {
        while (offset < data.length || (offset === 0 && data.length === 0)) {
          if (opts.stopAfter !== undefined && sent === opts.stopAfter) {
            // Once the node holds the chunks sent (its temporary file of the upload), the call is cut.
            const tmp = join(t.dir, 'data', 'tmp');
            const held = () => readdirSync(tmp).some((f) => f.endsWith('.part') && statSync(join(tmp, f), { throwIfNoEntry: false })?.size === offset);
            waitFor(held, `the node to hold the ${offset} bytes sent`, 60_000).then(() => stream.cancel(), reject);
            return;
          }
          const part = data.subarray(offset, offset + chunk);
          const last = offset + part.length >= data.length;
          const ok = stream.write({ resourceName: name, writeOffset: offset, data: part, finishWrite: last });
          offset += part.length;
          sent++;
          if (last) return void stream.end();
          if (!ok) return void stream.once('drain', pump);
        }
      };
      pump();
    });
  }

  function read(name: string, extra: Any = {}, authorization: string | null = ci): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const stream = clients.bs.Read({ resourceName: name, ...extra }, md(authorization ?? undefined));
      stream.on('data', (r: Any) => chunks.push(r.data as Buffer));
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  }

  beforeAll(async () => {
    t = await startTestNode(
      {
        version: 4,
        cache: {
          accessControl: { anonymousLevel: 'read', users: { ci: { level: 'readwrite', password: await fastHash('ci-password') }, dev: { level: 'read', password: await fastHash('dev-password') } } },
          targetSize: { type: 'fixed', size: 8 },
          maxArtifactSize: 6,
        },
        uiAccess: { type: 'open' },
      },
      { grpcPort: 0, maxConcurrentWrites: 2 },
    );
    const target = `127.0.0.1:${t.node.grpcPort}`;
    const creds = grpc.credentials.createInsecure();
    clients = {
      caps: new reapi.Capabilities(target, creds),
      ac: new reapi.ActionCache(target, creds),
      cas: new reapi.ContentAddressableStorage(target, creds),
      bs: new pkg['google']['bytestream'].ByteStream(target, creds),
    };
  });
  afterAll(async () => {
    for (const c of Object.values(clients ?? {})) (c as grpc.Client).close();
    await t?.close();
  });

  it('states SHA-256 and whether the caller may update the action cache', async () => {
    const mine = await call(clients.caps, 'GetCapabilities', { instanceName: 'main' });
    expect(mine['cacheCapabilities']['digestFunctions']).toEqual(['SHA256']);
    expect(mine['cacheCapabilities']['actionCacheUpdateCapabilities']['updateEnabled']).toBe(true);
    expect(mine['lowApiVersion']['major']).toBe(2);
    expect((await call(clients.caps, 'GetCapabilities', {}, dev))['cacheCapabilities']['actionCacheUpdateCapabilities']['updateEnabled']).toBe(false);
    expect((await call(clients.caps, 'GetCapabilities', {}, null))['cacheCapabilities']['actionCacheUpdateCapabilities']['updateEnabled']).toBe(false);
    expect((await refusal(call(clients.caps, 'GetCapabilities', {}, basic('ci', 'wrong')))).code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('stores batches of blobs verified against their digests, and finds and reads them', async () => {
    const a = blob();
    const b = blob();
    const wrong = blob();
    const r = await call(clients.cas, 'BatchUpdateBlobs', { requests: [{ digest: digest(a), data: a.data }, { digest: digest(b), data: b.data }, { digest: digest(wrong), data: randomBytes(wrong.size) }] });
    expect(r['responses'].map((x: Any) => x['status']['code'])).toEqual([grpc.status.OK, grpc.status.OK, grpc.status.INVALID_ARGUMENT]);
    expect(r['responses'][2]['status']['message']).toMatch(/Digest mismatch/);
    const missing = await call(clients.cas, 'FindMissingBlobs', { blobDigests: [digest(a), digest(b), digest(wrong), digest(blob(Buffer.alloc(0)))] });
    expect(missing['missingBlobDigests'].map((d: Any) => d['hash'])).toEqual([wrong.hash]);
    const empty = blob(Buffer.alloc(0));
    const got = await call(clients.cas, 'BatchReadBlobs', { digests: [digest(a), digest(wrong), digest(empty)] }, dev);
    expect(got['responses'].map((x: Any) => [x['digest']['hash'], Number(x['digest']['sizeBytes'] ?? 0)])).toEqual([
      [a.hash, a.size],
      [wrong.hash, wrong.size],
      [empty.hash, 0],
    ]);
    expect(got['responses'][0]['data']).toEqual(a.data);
    expect(got['responses'][0]['status']['code'] ?? 0).toBe(grpc.status.OK);
    expect(got['responses'][1]['status']['code']).toBe(grpc.status.NOT_FOUND);
    expect(got['responses'][1]['status']['message']).toBe(`No blob ${wrong.hash}/${wrong.size}`);
    expect(got['responses'][2]['status']['code'] ?? 0).toBe(grpc.status.OK);
    expect(got['responses'][2]['data'] ?? Buffer.alloc(0)).toHaveLength(0);
    expect(readdirSync(join(t.dir, 'data', 'tmp'))).toEqual([]);
    // Read users and anonymous callers write nothing.
    expect((await refusal(call(clients.cas, 'BatchUpdateBlobs', { requests: [] }, dev))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal(call(clients.cas, 'BatchUpdateBlobs', { requests: [] }, null))).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await refusal(call(clients.cas, 'FindMissingBlobs', { blobDigests: [{ hash: 'abc', sizeBytes: 1 }] }))).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('stores an action result only when the content it names is present, and answers it unchanged', async () => {
    const out = blob();
    const key = { hash: actionKey(), sizeBytes: 140 };
    const message = { outputFiles: [{ path: 'out/file0', digest: digest(out) }], exitCode: 0 };
    let err = await refusal(call(clients.ac, 'UpdateActionResult', { actionDigest: key, actionResult: message }));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.details).toContain(out.hash);
    expect((await refusal(call(clients.ac, 'GetActionResult', { actionDigest: key }))).code).toBe(grpc.status.NOT_FOUND);
    await call(clients.cas, 'BatchUpdateBlobs', { requests: [{ digest: digest(out), data: out.data }] });
    err = await refusal(call(clients.ac, 'UpdateActionResult', { actionDigest: key, actionResult: message }, dev));
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    await call(clients.ac, 'UpdateActionResult', { actionDigest: key, actionResult: message });
    const hit = await call(clients.ac, 'GetActionResult', { actionDigest: key }, dev);
    expect(hit['outputFiles'][0]['digest']['hash']).toBe(out.hash);
    // Same store as the HTTP protocol: the result is there too.
    expect((await fetch(`${t.node.url}/ac/${key.hash}`)).status).toBe(200);
    // Stored bytes are answered as they are, fields this node's .proto does not list included
    // (here execution_metadata, field 9, as Bazel's HTTP client sends it).
    const withMetadata = Buffer.concat([actionResult({ files: [out] }), Buffer.from([0x4a, 0x02, 0x0a, 0x00])]);
    const other = actionKey();
    expect((await fetch(`${t.node.url}/ac/${other}`, { method: 'PUT', body: new Uint8Array(withMetadata), headers: { authorization: ci } })).status).toBe(204);
    const raw = (b: Buffer) => b;
    const Raw = grpc.makeGenericClientConstructor(
      { Get: { path: '/build.bazel.remote.execution.v2.ActionCache/GetActionResult', requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw } },
      'ActionCache',
    );
    const rawClient = new Raw(`127.0.0.1:${t.node.grpcPort}`, grpc.credentials.createInsecure()) as unknown as Any;
    const requestType = messageType(`${REAPI}.GetActionResultRequest`);
    const request = Buffer.from(requestType.encode(requestType.fromObject({ actionDigest: { hash: other, sizeBytes: 10 } })).finish());
    const answered = await new Promise<Buffer>((resolve, reject) => rawClient.Get(request, md(dev), (err: Error | null, res: Buffer) => (err ? reject(err) : resolve(res))));
    rawClient.close();
    expect(answered.equals(withMetadata)).toBe(true);
  });

  it('writes a large blob with ByteStream, streamed to disk, and reads it back whole and in ranges', async () => {
    const big = blob(randomBytes(5 * MiB + 123));
    const name = `main/uploads/${randomUUID()}/blobs/${big.hash}/${big.size}`;
    expect((await write(name, big.data))['committedSize']).toBe(big.size);
    const back = await read(`main/blobs/${big.hash}/${big.size}`);
    expect(back.equals(big.data)).toBe(true);
    const range = await read(`blobs/${big.hash}/${big.size}`, { readOffset: 3 * MiB, readLimit: 1000 }, null);
    expect(range.equals(big.data.subarray(3 * MiB, 3 * MiB + 1000))).toBe(true);
    // Reads at once, from different offsets, each whole (the node reuses its chunk buffers).
    const many = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => read(`blobs/${big.hash}/${big.size}`, { readOffset: i * 1000 })));
    many.forEach((data, i) => expect(data.equals(big.data.subarray(i * 1000))).toBe(true));
    // A write of content already stored is acknowledged without storing it again.
    expect((await write(`uploads/${randomUUID()}/blobs/${big.hash}/${big.size}`, big.data))['committedSize']).toBe(big.size);
    const missingRead = await refusal(read(`blobs/${blob().hash}/100`));
    expect(missingRead.code).toBe(grpc.status.NOT_FOUND);
  });

  it('refuses a ByteStream write whose bytes are not its digest, and stores nothing', async () => {
    const b = blob(randomBytes(200 * KiB));
    const err = await refusal(write(`uploads/${randomUUID()}/blobs/${b.hash}/${b.size}`, randomBytes(b.size)));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/Digest mismatch/);
    expect((await call(clients.cas, 'FindMissingBlobs', { blobDigests: [digest(b)] }))['missingBlobDigests']).toHaveLength(1);
    await waitFor(() => readdirSync(join(t.dir, 'data', 'tmp')).length === 0, 'no temporary files');
    const denied = await refusal(write(`uploads/${randomUUID()}/blobs/${b.hash}/${b.size}`, b.data, { authorization: dev }));
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('resumes an interrupted ByteStream write at the committed size', async () => {
    const b = blob(randomBytes(1 * MiB));
    const name = `uploads/${randomUUID()}/blobs/${b.hash}/${b.size}`;
    await write(name, b.data, { stopAfter: 4 }).catch(() => undefined);
    let committed = 0;
    await waitFor(async () => {
      const s = await call(clients.bs, 'QueryWriteStatus', { resourceName: name });
      committed = s['committedSize'] as number;
      return committed === 4 * 64 * KiB && s['complete'] === false;
    }, 'the cut write committed up to 256 KiB');
    expect((await write(name, b.data.subarray(0), { offset: committed }))['committedSize']).toBe(b.size);
    expect((await read(`blobs/${b.hash}/${b.size}`)).equals(b.data)).toBe(true);
    const done = await call(clients.bs, 'QueryWriteStatus', { resourceName: name });
    expect(done).toMatchObject({ committedSize: b.size, complete: true });
  });

  it('sheds writes beyond the bound with RESOURCE_EXHAUSTED and a retry hint', async () => {
    // Two uploads hold both write slots while their streams are open.
    const held = [blob(randomBytes(256 * KiB)), blob(randomBytes(256 * KiB))].map((b) => {
      const stream = clients.bs.Write(md(ci), () => undefined);
      stream.write({ resourceName: `uploads/${randomUUID()}/blobs/${b.hash}/${b.size}`, writeOffset: 0, data: b.data.subarray(0, 1000) });
      return stream;
    });
    await waitFor(() => t.node.status().bazel.grpc.refused.shed === 0 && readdirSync(join(t.dir, 'data', 'tmp')).length === 2, 'no shed writes and two temporary files');
    const x = blob();
    const err = await refusal(call(clients.cas, 'BatchUpdateBlobs', { requests: [{ digest: digest(x), data: x.data }] }));
    expect(err.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(err.details).toMatch(/try again in 1 s/);
    const details = err.metadata.get('grpc-status-details-bin')[0] as Buffer;
    const root = new protobuf.Root().loadSync(join(PROTO_DIR, 'rpc.proto'));
    const status = root.lookupType('google.rpc.Status').decode(details) as Any;
    expect(status['details'][0]['type_url']).toBe('type.googleapis.com/google.rpc.RetryInfo');
    const retry = root.lookupType('google.rpc.RetryInfo').decode(status['details'][0]['value']) as Any;
    expect(Number(retry['retryDelay']['seconds'])).toBe(1);
    for (const s of held) s.cancel();
    await waitFor(async () => metric(await (await fetch(`${t.node.url}/metrics`)).text(), 'buildscope_cache_bazel_writes_in_flight', {}) === 0, 'no writes in flight');
    await waitFor(async () => (await call(clients.cas, 'BatchUpdateBlobs', { requests: [{ digest: digest(x), data: x.data }] }))['responses'][0]['status']['code'] === grpc.status.OK, 'BatchUpdateBlobs to succeed');
  });

  it('never answers an action result whose content was evicted', async () => {
    const x = blob(randomBytes(3 * MiB));
    await write(`uploads/${randomUUID()}/blobs/${x.hash}/${x.size}`, x.data);
    const key = { hash: actionKey(), sizeBytes: 100 };
    await call(clients.ac, 'UpdateActionResult', { actionDigest: key, actionResult: { outputFiles: [{ path: 'x', digest: digest(x) }] } });
    // Newer blobs push x out (target 8 MiB); the action result, newer than x, stays on disk.
    for (let i = 0; i < 2; i++) {
      const f = blob(randomBytes(3 * MiB));
      await write(`uploads/${randomUUID()}/blobs/${f.hash}/${f.size}`, f.data);
    }
    await waitFor(() => t.node.store.bytes <= 8 * MiB, 'the store to shrink to 8 MiB');
    expect((await call(clients.cas, 'FindMissingBlobs', { blobDigests: [digest(x)] }))['missingBlobDigests']).toHaveLength(1);
    expect(t.node.store.has(`ac/${key.hash}`)).toBe(true);
    expect((await refusal(call(clients.ac, 'GetActionResult', { actionDigest: key }))).code).toBe(grpc.status.NOT_FOUND);
    expect(t.node.status().bazel.grpc.refused.dangling).toBe(1);
    expect(t.node.store.has(`ac/${key.hash}`)).toBe(false);
  });

  it('counts the action cache and the content store apart under protocol="grpc"', async () => {
    const text = await (await fetch(`${t.node.url}/metrics`)).text();
    const g = t.node.status().bazel.grpc;
    expect(g.ac.hits).toBe(2);
    expect(g.ac.misses).toBe(2);
    expect(metric(text, 'buildscope_cache_bazel_hits_total', { protocol: 'grpc', part: 'ac' })).toBe(2);
    expect(metric(text, 'buildscope_cache_bazel_misses_total', { protocol: 'grpc', part: 'ac' })).toBe(2);
    expect(metric(text, 'buildscope_cache_bazel_hits_total', { protocol: 'grpc', part: 'cas' })).toBe(g.cas.hits);
    expect(metric(text, 'buildscope_cache_bazel_bytes_out_total', { protocol: 'grpc', part: 'cas' })).toBe(g.cas.bytesOut);
    expect(metric(text, 'buildscope_cache_bazel_bytes_in_total', { protocol: 'grpc', part: 'cas' })).toBe(g.cas.bytesIn);
    expect(metric(text, 'buildscope_cache_bazel_refused_total', { protocol: 'grpc', reason: 'digestMismatch' })).toBe(2);
    expect(metric(text, 'buildscope_cache_bazel_refused_total', { protocol: 'grpc', reason: 'shed' })).toBe(1);
    expect(metric(text, 'buildscope_cache_bazel_refused_total', { protocol: 'grpc', reason: 'dangling' })).toBe(1);
    expect(metric(text, 'buildscope_cache_bazel_hits_total', { protocol: 'http', part: 'ac' })).toBe(1);
  });
});
