// Bazel's test reports and logs, read from the cache nodes the server trusts.
//
// With `--remote_cache=grpc://NODE` and `--bes_backend`, Bazel uploads each test's `test.xml` and
// `test.log` to the cache and its events name them `bytestream://HOST:PORT[/INSTANCE]/blobs/HASH/SIZE`.
// The conversion of an invocation into a build (`bepToBuild`) is synchronous, so the files it will
// read are fetched first, here: only from the nodes of `bes.cacheNodes` (a URI naming any other
// host is never connected to, whatever it says: the events come from clients), over the node's
// own address and credentials from the configuration, with ByteStream.Read. Bounded: the size a URI
// states is checked before reading (and the bytes received against it), at most
// `testOutputsPerInvocation` files and MAX_BYTES_PER_INVOCATION bytes per invocation, all within
// one deadline. Each file is checked against its SHA-256. What was not read has a reason, which
// the build records in its tests (`unreadOutputs`).

import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { BesCacheNode } from '../config.js';
import type { ReadUri } from './bep-tests.js';

/** Bytes of test outputs held for one invocation at most (its reports and logs together). */
export const MAX_BYTES_PER_INVOCATION = 32 * 1024 * 1024;
/** Reads of one invocation running at once. */
const PARALLEL_READS = 4;

/** Why a test output was not read (the `reason` of `unreadOutputs`). */
export type UnreadReason =
  /** A `bytestream://` URI of a host that is not one of `bes.cacheNodes`. */
  | 'otherCache'
  /** A `file://` URI: the file is on the build machine (`ingest-bep` reads those). */
  | 'clientFile'
  /** Larger than `bes.testOutputMaxBytes`. */
  | 'tooLarge'
  /** Beyond `bes.testOutputsPerInvocation` or MAX_BYTES_PER_INVOCATION. */
  | 'limit'
  /** The node does not hold it (evicted, or never uploaded). */
  | 'notFound'
  /** The node refused the credentials of `bes.cacheNodes`. */
  | 'denied'
  /** Not read within `bes.testOutputTimeoutSeconds`. */
  | 'timeout'
  /** Anything else: the node is unreachable, or answered bytes that are not the digest's. */
  | 'failed'
  /** Not a URI this reader understands. */
  | 'unsupported';

export type Fetched = { readonly text: string } | { readonly unread: UnreadReason };

/** A parsed `bytestream://` URI. */
export interface BytestreamUri {
  /** `host:port` as the URI names it, lower case. */
  readonly authority: string;
  /** The ByteStream resource name: `[instance/]blobs/hash/size`. */
  readonly resourceName: string;
  readonly hash: string;
  readonly size: number;
}

const RESOURCE = /^((?:[^/?#]+\/)*)blobs\/([0-9a-f]{64})\/(\d{1,15})$/;

export function parseBytestreamUri(uri: string): BytestreamUri | undefined {
  if (!uri.startsWith('bytestream://')) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.host === '') return undefined;
  const resourceName = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const m = RESOURCE.exec(resourceName);
  if (!m || resourceName.includes('..')) return undefined;
  return { authority: url.host.toLowerCase(), resourceName, hash: m[2]!, size: Number(m[3]) };
}

export interface TestOutputReaderOptions {
  readonly cacheNodes: readonly BesCacheNode[];
  readonly testOutputMaxBytes: number;
  readonly testOutputsPerInvocation: number;
  readonly testOutputTimeoutSeconds: number;
  /** Bytes of one invocation's outputs at most (default MAX_BYTES_PER_INVOCATION). */
  readonly maxBytesPerInvocation?: number;
}

export interface TestOutputReader {
  /**
   * Reads the URIs (most wanted first) and answers for each; never throws and never takes longer
   * than the deadline (plus the time to cancel the calls).
   */
  fetch(uris: readonly string[]): Promise<Map<string, Fetched>>;
  close(): void;
}

interface Node {
  readonly client: grpc.Client;
  readonly authorization: string | undefined;
}

/** A ReadRequest { resource_name = 1; read_offset = 2; read_limit = 3 }. */
function encodeReadRequest(value: { resourceName: string; readLimit: number }): Buffer {
  const w = protobuf.Writer.create();
  w.uint32(10).string(value.resourceName);
  w.uint32(24).int64(value.readLimit);
  return Buffer.from(w.finish());
}

/** The `data` (field 10) of a ReadResponse, as a view of the message's bytes. */
function decodeReadResponse(bytes: Buffer): Buffer {
  const reader = protobuf.Reader.create(bytes);
  let data: Buffer = Buffer.alloc(0);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === ((10 << 3) | 2)) data = Buffer.from(reader.bytes());
    else reader.skipType(tag & 7);
  }
  return data;
}

export function createTestOutputReader(options: TestOutputReaderOptions): TestOutputReader {
  const nodes = new Map<string, Node>();
  for (const n of options.cacheNodes) {
    const address = n.address.toLowerCase();
    if (nodes.has(address)) continue;
    nodes.set(address, {
      // Connected lazily, at the first read.
      client: new grpc.Client(n.address, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': 4 * 1024 * 1024 + 1024,
        // A node that does not answer is given up on at the deadline; do not retry on the side.
        'grpc.enable_retries': 0,
      }),
      authorization: n.user !== undefined && n.password !== undefined ? `Basic ${Buffer.from(`${n.user}:${n.password}`).toString('base64')}` : undefined,
    });
  }
  const maxBytesPerInvocation = options.maxBytesPerInvocation ?? MAX_BYTES_PER_INVOCATION;

  function readBlob(node: Node, target: BytestreamUri, deadline: number, signal: { cancelled: boolean; calls: Set<grpc.ClientReadableStream<Buffer>> }): Promise<Fetched> {
    return new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      if (node.authorization !== undefined) metadata.set('authorization', node.authorization);
      const call = node.client.makeServerStreamRequest<{ resourceName: string; readLimit: number }, Buffer>(
        '/google.bytestream.ByteStream/Read',
        encodeReadRequest,
        decodeReadResponse,
        { resourceName: target.resourceName, readLimit: target.size },
        metadata,
        { deadline },
      );
      signal.calls.add(call);
      const chunks: Buffer[] = [];
      let received = 0;
      let done = false;
      const finish = (result: Fetched): void => {
        if (done) return;
        done = true;
        signal.calls.delete(call);
        resolve(result);
      };
      call.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > target.size) {
          // More than the digest says: not the file.
          finish({ unread: 'failed' });
          call.cancel();
          return;
        }
        chunks.push(chunk);
      });
      call.on('error', (e: grpc.ServiceError) => {
        if (e.code === grpc.status.NOT_FOUND) finish({ unread: 'notFound' });
        else if (e.code === grpc.status.UNAUTHENTICATED || e.code === grpc.status.PERMISSION_DENIED) finish({ unread: 'denied' });
        else if (e.code === grpc.status.DEADLINE_EXCEEDED || (e.code === grpc.status.CANCELLED && signal.cancelled)) finish({ unread: 'timeout' });
        else finish({ unread: 'failed' });
      });
      call.on('end', () => {
        const data = Buffer.concat(chunks, received);
        if (data.length !== target.size || createHash('sha256').update(data).digest('hex') !== target.hash) return finish({ unread: 'failed' });
        finish({ text: data.toString('utf8') });
      });
    });
  }

  return {
    async fetch(uris) {
      const out = new Map<string, Fetched>();
      const planned: { uri: string; node: Node; target: BytestreamUri }[] = [];
      let bytes = 0;
      for (const uri of new Set(uris)) {
        if (uri.startsWith('file://')) {
          out.set(uri, { unread: 'clientFile' });
          continue;
        }
        const target = parseBytestreamUri(uri);
        if (target === undefined) {
          out.set(uri, { unread: 'unsupported' });
          continue;
        }
        const node = nodes.get(target.authority);
        if (node === undefined) out.set(uri, { unread: 'otherCache' });
        else if (target.size > options.testOutputMaxBytes) out.set(uri, { unread: 'tooLarge' });
        else if (planned.length >= options.testOutputsPerInvocation || bytes + target.size > maxBytesPerInvocation) out.set(uri, { unread: 'limit' });
        else {
          bytes += target.size;
          planned.push({ uri, node, target });
        }
      }
      if (planned.length === 0) return out;
      const deadline = Date.now() + options.testOutputTimeoutSeconds * 1000;
      const signal = { cancelled: false, calls: new Set<grpc.ClientReadableStream<Buffer>>() };
      // The deadline of the whole invocation: calls still running then are cancelled.
      const timer = setTimeout(() => {
        signal.cancelled = true;
        for (const c of signal.calls) c.cancel();
      }, Math.max(0, deadline - Date.now()));
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < planned.length) {
          const p = planned[next++]!;
          out.set(p.uri, signal.cancelled ? { unread: 'timeout' } : await readBlob(p.node, p.target, deadline, signal));
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, planned.length) }, worker));
      } finally {
        clearTimeout(timer);
      }
      return out;
    },
    close() {
      for (const n of nodes.values()) n.client.close();
    },
  };
}

/** The `readUri` of `bepToBuild` answering from what was fetched (and saying why the rest was not read). */
export function readFetched(fetched: ReadonlyMap<string, Fetched>): ReadUri {
  return (uri) => {
    const f = fetched.get(uri);
    if (f !== undefined) return 'text' in f ? f.text : { unread: f.unread };
    if (uri.startsWith('file://')) return { unread: 'clientFile' };
    if (uri.startsWith('bytestream://')) return { unread: 'limit' };
    return undefined;
  };
}
