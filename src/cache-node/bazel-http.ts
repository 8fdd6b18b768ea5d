// Bazel's HTTP cache protocol (`--remote_cache=http://host:port`):
//
//   GET  /ac/{sha256}   200 with the serialized ActionResult | 404 (also when it names evicted content)
//   HEAD /ac/{sha256}   200 with Content-Length | 404
//   PUT  /ac/{sha256}   204 | 409 when content it names is not in /cas/ | 400 when it is no ActionResult
//   GET  /cas/{sha256}  200 with the blob | 404          HEAD /cas/{sha256}  200 | 404
//   PUT  /cas/{sha256}  204 | 400 when the body's SHA-256 is not {sha256}
//   PUT of either        413 over maxArtifactSize, 429 with Retry-After when too many writes run
//
// Bazel 4.2.3 builds these paths from the URL's path plus `ac/` or `cas/` and the hash, so the
// node is given as `http://host:port` with no path; it takes 404 as a miss and 200, 201, 202 or
// 204 as a stored upload. Bazel sends no HEAD; others (bazel-remote clients, scripts) do.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAccess, serveEntry } from './entries.js';
import { BlobWriter, getActionResult, maxBytes, putActionResult, casKey, type StoreOutcome } from './bazel-store.js';
import { readToEnd, sendProblem } from './responses.js';
import { SHA256_HEX } from './digest.js';
import { RETRY_AFTER_SECONDS } from './write-slots.js';
import type { NodeState } from './state.js';
import type { Part } from './bazel-counters.js';

/** The part and hash of a Bazel HTTP cache path, null when the path is not one, or a fault to answer 400. */
export function parseBazelPath(path: string): { part: Part; hash: string } | { fault: string } | null {
  const part: Part | null = path.startsWith('/ac/') ? 'ac' : path.startsWith('/cas/') ? 'cas' : null;
  if (part === null) return null;
  const hash = path.slice(part.length + 2);
  if (!SHA256_HEX.test(hash)) return { fault: `Not a SHA-256 digest in lowercase hex: ${JSON.stringify(hash.slice(0, 100))}` };
  return { part, hash };
}

export async function handleBazel(node: NodeState, req: IncomingMessage, res: ServerResponse, part: Part, hash: string): Promise<void> {
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      if (!(await checkAccess(node, req, res, 'read'))) return;
      return part === 'ac' ? getAc(node, res, hash, req.method === 'HEAD') : getCas(node, res, hash, req.method === 'HEAD');
    case 'PUT':
      return put(node, req, res, part, hash);
    default:
      sendProblem(res, 405, `${req.method} is not supported on /${part}/ entries`, { allow: 'GET, HEAD, PUT' });
  }
}

async function getAc(node: NodeState, res: ServerResponse, hash: string, head: boolean): Promise<void> {
  const counts = node.bazel.http;
  const found = await getActionResult(node, hash);
  switch (found.kind) {
    case 'miss':
    case 'dangling':
      if (found.kind === 'dangling') counts.refused.dangling++;
      if (!head) counts.ac.misses++;
      sendProblem(res, 404, `No action result ${hash}`);
      return;
    case 'hit':
      if (!head) {
        counts.ac.hits++;
        counts.ac.bytesOut += found.bytes.length;
      }
      res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(found.bytes.length)]);
      res.end(head ? undefined : found.bytes);
  }
}

async function getCas(node: NodeState, res: ServerResponse, hash: string, head: boolean): Promise<void> {
  const counts = node.bazel.http.cas;
  const key = casKey(hash);
  const { store } = node;
  const info = store.lookup(key);
  const miss = () => {
    if (!head) counts.misses++;
    sendProblem(res, 404, `No blob ${hash}`);
  };
  if (!info) return miss();
  return serveEntry(node, res, key, info, head, counts, `blob ${hash}`);
}

/**
 * The request body's chunks. Leaving the loop early must not destroy the request (the default of
 * a stream's iterator): the rest is read and the refusal sent on the same connection.
 */
function body(req: IncomingMessage): AsyncIterable<Buffer> {
  return req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>;
}

/** Reads the rest of the body (so the answer reaches the client, as for Gradle), then answers. */
async function refuseAfterBody(req: IncomingMessage, res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): Promise<void> {
  if (await readToEnd(req)) sendProblem(res, status, detail, headers);
}

function answerOutcome(node: NodeState, req: IncomingMessage, res: ServerResponse, part: Part, outcome: StoreOutcome): Promise<void> | void {
  const counts = node.bazel.http;
  switch (outcome.kind) {
    case 'stored':
      counts[part].writes++;
      counts[part].bytesIn += outcome.size;
      res.writeHead(204);
      res.end();
      return;
    case 'mismatch':
      counts.refused.digestMismatch++;
      return refuseAfterBody(req, res, 400, outcome.detail);
    case 'tooLarge':
      counts.refused.tooLarge++;
      return refuseAfterBody(req, res, 413, outcome.detail);
    case 'failed':
      return refuseAfterBody(req, res, outcome.full ? 507 : 500, outcome.detail);
  }
}

async function put(node: NodeState, req: IncomingMessage, res: ServerResponse, part: Part, hash: string): Promise<void> {
  if (!(await checkAccess(node, req, res, 'readwrite'))) return;
  const counts = node.bazel.http;
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > maxBytes(node)) {
    counts.refused.tooLarge++;
    return refuseAfterBody(req, res, 413, `The entry is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB): Content-Length ${declared}`);
  }
  const release = node.writeSlots.tryAcquire();
  if (!release) {
    counts.refused.shed++;
    return refuseAfterBody(req, res, 429, `Too many uploads at once (${node.writeSlots.limit}); try again in ${RETRY_AFTER_SECONDS} s`, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  }
  try {
    if (part === 'ac') return await putAc(node, req, res, hash);
    const writer = await BlobWriter.create(node, { hash, size: declared });
    let failed: StoreOutcome | undefined;
    try {
      for await (const chunk of body(req)) {
        failed = await writer.write(chunk);
        if (failed) break;
      }
    } catch {
      // The client went away mid-body: nothing to answer, nothing stored.
      await writer.discard();
      return;
    }
    if (failed) {
      await writer.discard();
      return await answerOutcome(node, req, res, 'cas', failed);
    }
    return await answerOutcome(node, req, res, 'cas', await writer.finish());
  } finally {
    release();
  }
}

async function putAc(node: NodeState, req: IncomingMessage, res: ServerResponse, hash: string): Promise<void> {
  const counts = node.bazel.http;
  const chunks: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of body(req)) {
      n += chunk.length;
      // An action result is small; a body past the limit is refused without holding it.
      if (n > maxBytes(node)) {
        counts.refused.tooLarge++;
        return await refuseAfterBody(req, res, 413, `The action result is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB)`);
      }
      chunks.push(chunk);
    }
  } catch {
    return;
  }
  const outcome = await putActionResult(node, hash, Buffer.concat(chunks));
  switch (outcome.kind) {
    case 'complete':
      throw new Error('unreachable: a complete check is stored');
    case 'missing':
      counts.refused.missingContent++;
      sendProblem(res, 409, `The action result names ${outcome.missing.length} blob(s) not in /cas/ (upload them first): ${outcome.missing.slice(0, 5).map((d) => `${d.hash}/${d.size}`).join(', ')}`);
      return;
    case 'invalid':
      sendProblem(res, 400, outcome.detail);
      return;
    case 'stored':
    case 'mismatch':
    case 'tooLarge':
    case 'failed':
      return answerOutcome(node, req, res, 'ac', outcome);
  }
}
