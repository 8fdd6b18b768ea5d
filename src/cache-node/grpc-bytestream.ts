// google.bytestream.ByteStream over the content store: reads of `{instance}/blobs/{hash}/{size}`
// and writes of `{instance}/uploads/{uuid}/blobs/{hash}/{size}`, streamed between the socket and
// the disk chunk by chunk (a blob is never held whole in memory), verified against the digest as
// it arrives. Writes are resumable: an upload interrupted mid-stream keeps its temporary file
// for a while, QueryWriteStatus tells how much was committed, and a new Write continuing at that
// offset finishes it.

import { readv as fsReadv } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { BlobWriter, casKey, type StoreOutcome } from './bazel-store.js';
import { EMPTY_SHA256 } from './digest.js';
import { callAccess, grpcError, Refusal } from './grpc-protocol.js';
import { writeSlot } from './grpc-cache.js';
import { closeEntry, openEntry } from './send-file.js';
import type { NodeState } from './state.js';

/**
 * Bytes per ReadResponse. grpc-js copies every message into a fresh buffer to frame it, and sends
 * one message at a time (the next after the previous one's write completed). At 1 MiB that buffer
 * was fresh memory from the system each time (page faults, then the collector): the node spent
 * about three times the CPU per byte of Node's HTTP/2 sending the same bytes. Below the C
 * allocator's 128 KiB mmap threshold it is reused heap memory; as large as that allows keeps the
 * per-message work (one socket write each) small. Measured in docs/cache-node.md, "Bazel's gRPC
 * reads against the HTTP path and nginx".
 */
export const READ_CHUNK = 120 * 1024;
/** Messages read from disk at once, with one preadv (960 KiB): the per-read cost stays that of large reads. */
const CHUNKS_PER_READ = 8;
/** How long an interrupted upload waits to be resumed. */
const RESUMABLE_FOR_MS = 10 * 60_000;
/** Interrupted uploads kept at once (each holds a temporary file and a file handle); oldest dropped. */
const MAX_RESUMABLE = 64;

type Resource =
  | { readonly kind: 'read'; readonly hash: string; readonly size: number }
  | { readonly kind: 'write'; readonly upload: string; readonly hash: string; readonly size: number };

const READ_NAME = /^(?:.*\/)?blobs\/([0-9a-f]{64})\/(\d+)$/;
const WRITE_NAME = /^(?:.*\/)?uploads\/([^/]+)\/blobs\/([0-9a-f]{64})\/(\d+)(?:\/.*)?$/;

export function parseResourceName(name: string, kind: 'read' | 'write'): Resource | { readonly fault: string } {
  if (/(^|\/)compressed-blobs\//.test(name)) return { fault: `Compressed blobs are not supported: ${name}` };
  if (kind === 'read') {
    const m = READ_NAME.exec(name);
    if (!m) return { fault: `Not a blob resource name ({instance}/blobs/{sha256}/{size}): ${JSON.stringify(name.slice(0, 200))}` };
    return { kind, hash: m[1]!, size: Number(m[2]) };
  }
  const m = WRITE_NAME.exec(name);
  if (!m) return { fault: `Not an upload resource name ({instance}/uploads/{uuid}/blobs/{sha256}/{size}): ${JSON.stringify(name.slice(0, 200))}` };
  return { kind, upload: m[1]!, hash: m[2]!, size: Number(m[3]) };
}

interface ReadRequest {
  resourceName?: string;
  readOffset?: number | { toString(): string };
  readLimit?: number | { toString(): string };
}
interface WriteRequest {
  resourceName?: string;
  writeOffset?: number | { toString(): string };
  finishWrite?: boolean;
  data?: Uint8Array;
}

const num = (v: number | { toString(): string } | undefined): number => (v === undefined ? 0 : Number(typeof v === 'number' ? v : v.toString()));

/** Room before a chunk for its ReadResponse header: the tag of `data` and the varint of its length (3 bytes below 2 MiB). */
const HEADER_ROOM = 4;
const SLOT = HEADER_ROOM + READ_CHUNK;
/**
 * Read buffers kept for reuse (16 of 960 KiB). A fresh buffer per read cost more in garbage
 * collection than the rest of a read together; a buffer goes back to the pool once grpc-js has
 * framed its last message (that write's callback), when nothing refers to it any more.
 */
const POOL_MAX = 16;
const pool: Buffer[] = [];

/** Up to CHUNKS_PER_READ chunks of the blob, each read behind room for its header, with one preadv. */
interface Block {
  /** The encoded ReadResponse messages (handed to grpc-js without a copy). */
  readonly messages: Buffer[];
  readonly buffer: Buffer;
  readonly bytes: number;
}

function readBlock(fd: number, length: number, position: number): Promise<Block> {
  const buffer = pool.pop() ?? Buffer.allocUnsafeSlow(SLOT * CHUNKS_PER_READ);
  const segments: Buffer[] = [];
  for (let at = 0; at < length; at += READ_CHUNK) {
    const slot = segments.length * SLOT + HEADER_ROOM;
    segments.push(buffer.subarray(slot, slot + Math.min(READ_CHUNK, length - at)));
  }
  return new Promise((resolve, reject) =>
    fsReadv(fd, segments, position, (err, n) => {
      if (err) {
        release(buffer);
        return reject(err);
      }
      const messages: Buffer[] = [];
      for (let i = 0, left = n; left > 0; i++, left -= READ_CHUNK) {
        const bytes = Math.min(READ_CHUNK, left);
        // tag (10 << 3 | 2), then the length as a varint.
        let start = i * SLOT + HEADER_ROOM;
        const varint: number[] = [];
        for (let v = bytes; ; v >>>= 7) {
          varint.push((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
          if (v < 0x80) break;
        }
        start -= varint.length + 1;
        buffer[start] = (10 << 3) | 2;
        for (let k = 0; k < varint.length; k++) buffer[start + 1 + k] = varint[k]!;
        messages.push(buffer.subarray(start, i * SLOT + HEADER_ROOM + bytes));
      }
      resolve({ messages, buffer, bytes: n });
    }),
  );
}

function release(buffer: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(buffer);
}

interface Partial {
  readonly writer: BlobWriter;
  timer: NodeJS.Timeout;
}

export function byteStreamHandlers(node: NodeState): { handlers: grpc.UntypedServiceImplementation; close(): Promise<void> } {
  const counts = node.bazel.grpc;
  const partials = new Map<string, Partial>();
  /** Uploads being written by a call now, by resource name (a second concurrent Write of one is refused). */
  const active = new Set<string>();

  const dropPartial = async (name: string) => {
    const p = partials.get(name);
    if (!p) return;
    partials.delete(name);
    clearTimeout(p.timer);
    await p.writer.discard();
  };
  const keepPartial = (name: string, writer: BlobWriter) => {
    while (partials.size >= MAX_RESUMABLE) void dropPartial(partials.keys().next().value as string);
    const timer = setTimeout(() => void dropPartial(name), RESUMABLE_FOR_MS);
    timer.unref();
    partials.set(name, { writer, timer });
  };

  async function read(call: grpc.ServerWritableStream<ReadRequest, { encoded: Buffer }>): Promise<void> {
    const access = await callAccess(node, call, 'read');
    if (access.kind === 'refuse') return void call.emit('error', access.error);
    const r = parseResourceName(call.request.resourceName ?? '', 'read');
    if ('fault' in r) return void call.emit('error', grpcError(grpc.status.INVALID_ARGUMENT, r.fault));
    const offset = num(call.request.readOffset);
    const limit = num(call.request.readLimit);
    if (offset < 0 || limit < 0 || offset > r.size) return void call.emit('error', grpcError(grpc.status.OUT_OF_RANGE, `read_offset ${offset} is outside the blob (${r.size} bytes)`));
    if (r.size === 0 && r.hash === EMPTY_SHA256) {
      counts.cas.hits++;
      return void call.end();
    }
    const key = casKey(r.hash);
    const info = node.store.lookup(key);
    const opened = info && info.size === r.size ? await openEntry(node.store.pathOf(key)) : undefined;
    if (!opened || opened.kind === 'missing') {
      if (info && opened?.kind === 'missing') node.store.forget(key, info);
      counts.cas.misses++;
      return void call.emit('error', grpcError(grpc.status.NOT_FOUND, `No blob ${r.hash}/${r.size}`));
    }
    node.store.touch(key, info!);
    counts.cas.hits++;
    const end = limit > 0 ? Math.min(opened.size, offset + limit) : opened.size;
    try {
      let position = offset;
      const BLOCK = READ_CHUNK * CHUNKS_PER_READ;
      // The next block is read from disk while the current one goes out.
      let next = position < end ? readBlock(opened.fd, Math.min(BLOCK, end - position), position) : null;
      while (next) {
        const block = await next;
        if (block.bytes === 0) {
          release(block.buffer);
          throw new Error(`blob file shorter than its size (${position} of ${end} bytes)`);
        }
        position += block.bytes;
        next = position < end ? readBlock(opened.fd, Math.min(BLOCK, end - position), position) : null;
        counts.cas.bytesOut += block.bytes;
        if (call.cancelled) {
          release(block.buffer);
          break;
        }
        // grpc-js serializes (copies) a message before it calls back: after the block's last
        // message the buffer is free. Every message goes to grpc-js's queue at once; it holds 16.
        let written = true;
        block.messages.forEach((encoded, i) => {
          written = call.write({ encoded }, i === block.messages.length - 1 ? () => release(block.buffer) : undefined);
        });
        if (!written) await new Promise<void>((resolve) => {
          const done = () => {
            call.off('drain', done);
            call.off('close', done);
            resolve();
          };
          call.on('drain', done);
          call.on('close', done);
        });
      }
      await next?.then((c) => release(c.buffer)).catch(() => undefined);
      call.end();
    } catch (err) {
      node.logger.error({ err, hash: r.hash }, 'reading a blob failed');
      call.emit('error', grpcError(grpc.status.INTERNAL, 'The blob could not be read; the error is logged'));
    } finally {
      closeEntry(opened.fd);
    }
  }

  async function write(call: grpc.ServerReadableStream<WriteRequest, { committedSize: number }>): Promise<{ committedSize: number }> {
    const access = await callAccess(node, call, 'readwrite');
    if (access.kind === 'refuse') throw access.error;
    const release = writeSlot(node);
    let name: string | undefined;
    let writer: BlobWriter | undefined;
    /** The blob is already stored: the rest of the stream is read and dropped. */
    let skip: { size: number; seen: number } | undefined;
    let finished = false;
    const fail = async (outcome: StoreOutcome): Promise<never> => {
      if (outcome.kind === 'mismatch') counts.refused.digestMismatch++;
      if (outcome.kind === 'tooLarge') counts.refused.tooLarge++;
      await writer?.discard();
      writer = undefined;
      throw grpcError(outcome.kind === 'failed' && !outcome.full ? grpc.status.INTERNAL : outcome.kind === 'failed' ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.INVALID_ARGUMENT, 'detail' in outcome ? outcome.detail : 'not stored');
    };
    try {
      for await (const req of call as AsyncIterable<WriteRequest>) {
        const offset = num(req.writeOffset);
        if (name === undefined) {
          name = req.resourceName ?? '';
          const r = parseResourceName(name, 'write');
          if ('fault' in r) throw grpcError(grpc.status.INVALID_ARGUMENT, r.fault);
          if (active.has(name)) throw grpcError(grpc.status.ABORTED, `Upload ${name} is being written by another call`);
          active.add(name);
          const existing = node.store.lookup(casKey(r.hash));
          if (existing && existing.size === r.size) {
            await dropPartial(name);
            skip = { size: r.size, seen: offset };
          } else {
            const partial = partials.get(name);
            if (partial && offset === partial.writer.bytes && offset > 0) {
              partials.delete(name);
              clearTimeout(partial.timer);
              writer = partial.writer;
            } else if (offset === 0) {
              await dropPartial(name);
              writer = await BlobWriter.create(node, { hash: r.hash, size: r.size });
            } else {
              throw grpcError(grpc.status.OUT_OF_RANGE, `write_offset ${offset} does not continue this upload (committed: ${partial?.writer.bytes ?? 0}); ask QueryWriteStatus`);
            }
          }
        } else if (req.resourceName && req.resourceName !== name) {
          throw grpcError(grpc.status.INVALID_ARGUMENT, 'resource_name changed within one Write');
        }
        const data = req.data ?? new Uint8Array();
        if (skip) {
          skip.seen += data.length;
        } else {
          if (offset !== writer!.bytes) throw grpcError(grpc.status.INVALID_ARGUMENT, `write_offset ${offset} is not the committed size ${writer!.bytes}`);
          if (data.length > 0) {
            const failed = await writer!.write(data);
            if (failed) await fail(failed);
          }
        }
        if (req.finishWrite) {
          finished = true;
          if (skip) return { committedSize: skip.size };
          const w = writer!;
          writer = undefined;
          const outcome = await w.finish();
          if (outcome.kind !== 'stored') await fail(outcome);
          counts.cas.writes++;
          counts.cas.bytesIn += w.bytes;
          return { committedSize: w.bytes };
        }
      }
      throw grpcError(grpc.status.INVALID_ARGUMENT, 'The Write stream ended without finish_write');
    } finally {
      // Interrupted before finish_write (the client went away, the stream broke): the bytes so
      // far stay for a resumed Write. A refused blob was discarded already (writer unset).
      if (writer && name !== undefined && !finished) keepPartial(name, writer);
      if (name !== undefined) active.delete(name);
      release();
    }
  }

  return {
    handlers: {
      Read: (call: grpc.ServerWritableStream<ReadRequest, { encoded: Buffer }>) => {
        read(call).catch((err: unknown) => {
          node.logger.error({ err }, 'ByteStream.Read failed');
          call.emit('error', grpcError(grpc.status.INTERNAL, 'The read failed; the error is logged'));
        });
      },
      Write: (call: grpc.ServerReadableStream<WriteRequest, { committedSize: number }>, callback: grpc.sendUnaryData<{ committedSize: number }>) => {
        write(call).then(
          (res) => callback(null, res),
          (err: unknown) => {
            if (err instanceof Refusal) return callback(err);
            // The stream broke (cancelled, reset): nobody reads an answer; the partial upload is kept.
            if (call.cancelled) return callback(grpcError(grpc.status.CANCELLED, 'The client cancelled the write'));
            node.logger.error({ err }, 'ByteStream.Write failed');
            callback(grpcError(grpc.status.INTERNAL, 'The write failed; the error is logged'));
          },
        );
      },
      QueryWriteStatus: (call: grpc.ServerUnaryCall<{ resourceName?: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        void (async () => {
          const access = await callAccess(node, call, 'readwrite');
          if (access.kind === 'refuse') return callback(access.error);
          const name = call.request.resourceName ?? '';
          const r = parseResourceName(name, 'write');
          if ('fault' in r) return callback(grpcError(grpc.status.INVALID_ARGUMENT, r.fault));
          const stored = node.store.lookup(casKey(r.hash));
          if (stored && stored.size === r.size) return callback(null, { committedSize: r.size, complete: true });
          // Unknown uploads are reported as nothing committed: the client starts over.
          callback(null, { committedSize: active.has(name) ? 0 : (partials.get(name)?.writer.bytes ?? 0), complete: false });
        })().catch((err: unknown) => {
          node.logger.error({ err }, 'ByteStream.QueryWriteStatus failed');
          callback(grpcError(grpc.status.INTERNAL, 'The query failed; the error is logged'));
        });
      },
    },
    async close() {
      for (const name of [...partials.keys()]) await dropPartial(name);
    },
  };
}

