// The cache protocol: GET, HEAD and PUT of /cache/{key}, and the early answer to an upload that
// asks `Expect: 100-continue`.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { allowedAtOnce, decideCacheAccess, REALM, type Need } from './access.js';
import { clientOf, readToEnd, sendProblem } from './responses.js';
import { closeEntry, openEntry, sendOpenFile, type OpenResult } from './send-file.js';
import { MiB, type NodeState } from './state.js';
import type { EntryInfo } from './storage.js';

class TooLarge extends Error {}

/** Counts bytes and fails as soon as a body grows past the limit. */
function limiter(maxBytes: number, counted: { n: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      counted.n += chunk.length;
      if (counted.n > maxBytes) cb(new TooLarge());
      else cb(null, chunk);
    },
  });
}

/**
 * Whether an `X-Gradle-Version` is of a Gradle that takes a refused store (413 included) as an
 * error and disables its remote cache: every version before 7.0. Unreadable versions are assumed
 * to be current.
 */
export function gradleWithout413(version: string): boolean {
  const m = /^\s*(\d+)\./.exec(version);
  return m !== null && Number(m[1]) < 7;
}

/** `extra`: headers for a refusal (Connection: close when a body will not be read). */
export async function checkAccess(node: NodeState, req: IncomingMessage, res: ServerResponse, need: Need, extra: Record<string, string> = {}): Promise<boolean> {
  const d = await decideCacheAccess(node.config, node.checker, req.headers.authorization, need, clientOf(req), () => !req.socket.destroyed);
  switch (d.kind) {
    case 'allow':
      return true;
    case 'unauthorized':
      sendProblem(res, 401, d.detail, { 'www-authenticate': `Basic realm="${REALM}", charset="UTF-8"`, ...extra });
      return false;
    case 'forbidden':
      sendProblem(res, 403, d.detail, extra);
      return false;
    case 'tooMany':
      sendProblem(res, 429, d.detail, { 'retry-after': String(d.retryAfterSeconds), ...extra });
      return false;
  }
}

/**
 * An entry over maxArtifactSize whose body has been read to the end. Gradle before 7.0 takes any
 * refusal of a store, 413 included, as an error and switches its remote cache off for the rest
 * of the build; it gets a 202 (nothing stored, logged and counted) so that the build keeps its
 * cache. Every other client gets the 413.
 */
function refuseTooLarge(node: NodeState, req: IncomingMessage, res: ServerResponse, key: string, size: string): void {
  const gradle = req.headers['x-gradle-version'];
  if (typeof gradle === 'string' && gradleWithout413(gradle)) {
    node.counters.discardedTooLarge++;
    node.logger.warn({ key, size, gradleVersion: gradle, maxArtifactSizeMiB: node.config.maxArtifactMiB }, 'oversized entry discarded: answered 202 because Gradle before 7.0 disables its remote cache on a 413');
    res.writeHead(202, { 'content-length': 0 });
    res.end();
    return;
  }
  node.counters.rejectedTooLarge++;
  sendProblem(res, 413, `The entry is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB): ${size}`);
}

/** The disk, not the client, failed: 507 when it is full, 500 otherwise; logged either way. */
function storageFailed(node: NodeState, res: ServerResponse, err: Error): void {
  const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
  node.logger.error({ err }, full ? 'the volume is full; entry not stored' : 'storing an entry failed');
  sendProblem(res, full ? 507 : 500, full ? 'The cache volume is full; the entry was not stored' : 'The entry could not be stored; the error is logged');
}

/**
 * Hot path: a read allowed at once (anonymous, or credentials that already passed) of a miss, a
 * HEAD or an entry held in memory is answered synchronously (no promise, no await); everything
 * else goes on in the async part.
 */
export function handleGet(node: NodeState, req: IncomingMessage, res: ServerResponse, key: string, head: boolean): Promise<void> | undefined {
  if (!allowedAtOnce(node.config, node.checker, req.headers.authorization, 'read')) return checkedGet(node, req, res, key, head);
  const { store, counters } = node;
  const info = store.lookup(key);
  if (!info) {
    if (!head) counters.misses++;
    sendProblem(res, 404, `No cache entry ${key}`);
    return undefined;
  }
  const held = head ? undefined : store.memoized(key);
  if (!head && !held) return serveGet(node, res, key, info, false);
  store.touch(key, info);
  const size = held ? held.length : info.size;
  if (held) {
    counters.hits++;
    counters.bytesOut += size;
  }
  res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(size)]);
  res.end(held);
  return undefined;
}

async function checkedGet(node: NodeState, req: IncomingMessage, res: ServerResponse, key: string, head: boolean): Promise<void> {
  if (!(await checkAccess(node, req, res, 'read'))) return;
  const info = node.store.lookup(key);
  if (!info) {
    if (!head) node.counters.misses++;
    sendProblem(res, 404, `No cache entry ${key}`);
    return;
  }
  return serveGet(node, res, key, info, head);
}

/** What a read counts: the node's own counters for Gradle and Maven, Bazel's per protocol and part. */
export interface ReadCounts {
  hits: number;
  misses: number;
  bytesOut: number;
}

async function serveGet(node: NodeState, res: ServerResponse, key: string, info: EntryInfo, head: boolean): Promise<void> {
  return serveEntry(node, res, key, info, head, node.counters, `cache entry ${key}`);
}

/**
 * Answers GET or HEAD of a stored entry: its size for HEAD; a small one from memory; a larger one
 * from its file, opened once and sent from reused buffers (send-file.ts), its size from the open
 * file, so that a concurrent replacement cannot make it disagree. `what` names it in a 404.
 */
export async function serveEntry(node: NodeState, res: ServerResponse, key: string, info: EntryInfo, head: boolean, counts: ReadCounts, what: string): Promise<void> {
  const { store } = node;
  store.touch(key, info);
  if (head) {
    res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(info.size)]);
    res.end();
    return;
  }
  const small = store.memoized(key) ?? (await store.small(key, info));
  if (small) {
    counts.hits++;
    counts.bytesOut += small.length;
    res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(small.length)]);
    res.end(small);
    return;
  }
  let opened: OpenResult;
  try {
    opened = await openEntry(store.pathOf(key));
  } catch (err) {
    node.logger.error({ err, key }, 'reading an entry failed');
    sendProblem(res, 500, 'The entry could not be read; the error is logged');
    return;
  }
  if (opened.kind === 'missing') {
    // Removed between lookup and open (eviction, expiry): a miss.
    store.forget(key, info);
    counts.misses++;
    sendProblem(res, 404, `No ${what}`);
    return;
  }
  counts.hits++;
  counts.bytesOut += opened.size;
  res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(opened.size)]);
  try {
    await sendOpenFile(res, opened.fd, opened.size);
  } catch (err) {
    if (!res.destroyed) node.logger.error({ err, key }, 'sending an entry failed');
    res.destroy();
  } finally {
    closeEntry(opened.fd);
  }
}

export async function handlePut(node: NodeState, req: IncomingMessage, res: ServerResponse, key: string): Promise<void> {
  if (!(await checkAccess(node, req, res, 'readwrite'))) return;
  const { store, counters } = node;
  const max = node.config.maxArtifactMiB * MiB;
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > max) {
    // Read the whole body before answering: a client that is still sending when the answer
    // comes and the connection closes sees a reset, not the answer (Gradle then switches its
    // remote cache off). The bytes are discarded as they arrive; the connection stays usable.
    if (await readToEnd(req)) refuseTooLarge(node, req, res, key, `Content-Length ${declared}`);
    return;
  }
  const { tmpPath, stream } = store.beginWrite();
  const counted = { n: 0 };
  const limit = limiter(max, counted);
  // req is piped, not passed to pipeline(): pipeline would destroy the socket on failure, and
  // the client must still receive the 413.
  const onAbort = () => {
    if (!req.complete) limit.destroy(new Error('client went away'));
  };
  req.once('close', onAbort);
  req.once('error', onAbort);
  req.pipe(limit);
  try {
    await pipeline(limit, stream);
  } catch (err) {
    req.unpipe(limit);
    await store.discard(tmpPath);
    if (err instanceof TooLarge) {
      // A body without a length (chunked) grew past the limit: as above, read the rest, then answer.
      if (await readToEnd(req)) refuseTooLarge(node, req, res, key, `body exceeded ${max} bytes`);
    } else if (res.headersSent || res.destroyed) return;
    else if (stream.errored) storageFailed(node, res, stream.errored);
    else sendProblem(res, 400, `The body could not be read: ${(err as Error).message}`);
    return;
  } finally {
    req.off('close', onAbort);
    req.off('error', onAbort);
  }
  let isNew: boolean;
  try {
    isNew = await store.commit(key, tmpPath, counted.n);
  } catch (err) {
    await store.discard(tmpPath);
    storageFailed(node, res, err as Error);
    return;
  }
  counters.writes++;
  counters.bytesIn += counted.n;
  res.writeHead(isNew ? 201 : 204);
  res.end();
}

/**
 * An upload with `Expect: 100-continue`: refused (with Connection: close, as its body will never
 * come) when unauthorised or declared too large; otherwise true, and the caller sends 100.
 */
export async function continueUpload(node: NodeState, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (!(await checkAccess(node, req, res, 'readwrite', { connection: 'close' }))) return false;
  const declared = req.headers['content-length'];
  const gradle = req.headers['x-gradle-version'];
  // A client that cannot take a 413 gets its 100 and then a 202 once the body is read.
  const takes413 = !(typeof gradle === 'string' && gradleWithout413(gradle));
  if (takes413 && declared !== undefined && Number(declared) > node.config.maxArtifactMiB * MiB) {
    node.counters.rejectedTooLarge++;
    sendProblem(res, 413, `The entry is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB): Content-Length ${declared}`, { connection: 'close' });
    return false;
  }
  return true;
}
