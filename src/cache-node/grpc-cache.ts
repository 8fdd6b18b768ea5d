// Capabilities, the action cache and the content-addressable storage of the Remote Execution
// API over gRPC, on the same store and checks as Bazel's HTTP cache (bazel-store.ts).
// Instance names are accepted and ignored: every instance shares the node's one cache.

import * as grpc from '@grpc/grpc-js';
import { digestFault, getActionResult, hasBlob, putActionResult, putBlob, readEntry, casKey, type StoreOutcome } from './bazel-store.js';
import { isEmptyBlob, type Digest } from './digest.js';
import { callAccess, grpcError, Refusal, resourceExhausted, type BatchReadEntry, type SurfaceCall, type UpdateActionResultRequest } from './grpc-protocol.js';
import { digestMessage, toDigest, type DigestMessage } from './proto.js';
import type { NodeState } from './state.js';
import { RETRY_AFTER_SECONDS } from './write-slots.js';

/**
 * Largest total of a BatchUpdateBlobs or BatchReadBlobs request, as told to clients: the request
 * or answer is one gRPC message held in memory, and gRPC's default message limit is 4 MiB.
 */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024 - 64 * 1024;

type Unary<Req, Res> = (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => void;

/** Runs an async handler, turning a thrown error into INTERNAL (logged) instead of a crash. */
function unary<Req, Res>(node: NodeState, name: string, run: (call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>): Unary<Req, Res> {
  return (call, callback) => {
    run(call).then(
      (res) => callback(null, res),
      (err: unknown) => {
        if (err instanceof Refusal) return callback(err);
        node.logger.error({ err, method: name }, 'gRPC call failed');
        callback(grpcError(grpc.status.INTERNAL, 'The node could not complete the call; the error is logged'));
      },
    );
  };
}

async function allowed(node: NodeState, call: SurfaceCall, need: 'read' | 'readwrite'): Promise<boolean> {
  const a = await callAccess(node, call, need);
  if (a.kind === 'refuse') throw a.error;
  return a.canWrite;
}

function checkedDigest(m: DigestMessage | null | undefined, what: string): Digest {
  const d = toDigest(m);
  if (!d) throw grpcError(grpc.status.INVALID_ARGUMENT, `${what} is missing`);
  const fault = digestFault(d);
  if (fault !== undefined) throw grpcError(grpc.status.INVALID_ARGUMENT, `${what}: ${fault} (this node speaks SHA-256)`);
  return d;
}

/** A google.rpc.Status for one blob of a batch. */
function statusOf(outcome: StoreOutcome): { code: number; message: string } {
  switch (outcome.kind) {
    case 'stored':
      return { code: grpc.status.OK, message: '' };
    case 'mismatch':
      return { code: grpc.status.INVALID_ARGUMENT, message: outcome.detail };
    case 'tooLarge':
      return { code: grpc.status.INVALID_ARGUMENT, message: outcome.detail };
    case 'failed':
      return { code: outcome.full ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.INTERNAL, message: outcome.detail };
  }
}

/** Takes a write slot or refuses the call with RESOURCE_EXHAUSTED and a retry hint. */
export function writeSlot(node: NodeState): () => void {
  const release = node.writeSlots.tryAcquire();
  if (release) return release;
  node.bazel.grpc.refused.shed++;
  throw resourceExhausted(`Too many writes at once (${node.writeSlots.limit}); try again in ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS);
}

interface GetActionResultRequest {
  actionDigest?: DigestMessage;
}
interface FindMissingBlobsRequest {
  blobDigests?: DigestMessage[];
}
interface BatchUpdateBlobsRequest {
  requests?: { digest?: DigestMessage; data?: Uint8Array }[];
}
interface BatchReadBlobsRequest {
  digests?: DigestMessage[];
}

export function cacheHandlers(node: NodeState): Record<'capabilities' | 'actionCache' | 'cas', grpc.UntypedServiceImplementation> {
  const counts = node.bazel.grpc;
  return {
    capabilities: {
      GetCapabilities: unary(node, 'GetCapabilities', async (call) => {
        const canWrite = await allowed(node, call, 'read');
        return {
          cacheCapabilities: {
            digestFunctions: ['SHA256'],
            // Per caller: Bazel refuses to start with --remote_upload_local_results (its default)
            // when this is false, which tells a read-only user to pass =false.
            actionCacheUpdateCapabilities: { updateEnabled: canWrite },
            maxBatchTotalSizeBytes: MAX_BATCH_BYTES,
            symlinkAbsolutePathStrategy: 'DISALLOWED',
          },
          lowApiVersion: { major: 2, minor: 0 },
          highApiVersion: { major: 2, minor: 0 },
        };
      }),
    },
    actionCache: {
      GetActionResult: unary<GetActionResultRequest, Buffer>(node, 'GetActionResult', async (call) => {
        await allowed(node, call, 'read');
        const d = checkedDigest(call.request.actionDigest, 'action_digest');
        const found = await getActionResult(node, d.hash);
        switch (found.kind) {
          case 'hit':
            counts.ac.hits++;
            counts.ac.bytesOut += found.bytes.length;
            return found.bytes;
          case 'dangling':
            counts.refused.dangling++;
            counts.ac.misses++;
            throw grpcError(grpc.status.NOT_FOUND, `No action result ${d.hash}`);
          case 'miss':
            counts.ac.misses++;
            throw grpcError(grpc.status.NOT_FOUND, `No action result ${d.hash}`);
        }
      }),
      UpdateActionResult: unary<UpdateActionResultRequest, Buffer>(node, 'UpdateActionResult', async (call) => {
        await allowed(node, call, 'readwrite');
        const d = checkedDigest(call.request.actionDigest as DigestMessage | undefined, 'action_digest');
        const release = writeSlot(node);
        try {
          const bytes = call.request.actionResult;
          const outcome = await putActionResult(node, d.hash, bytes);
          switch (outcome.kind) {
            case 'stored':
              counts.ac.writes++;
              counts.ac.bytesIn += outcome.size;
              return bytes;
            case 'missing':
              counts.refused.missingContent++;
              throw grpcError(
                grpc.status.FAILED_PRECONDITION,
                `The action result names ${outcome.missing.length} blob(s) not in the CAS (upload them first): ${outcome.missing.slice(0, 5).map((m) => `${m.hash}/${m.size}`).join(', ')}`,
              );
            case 'invalid':
              throw grpcError(grpc.status.INVALID_ARGUMENT, outcome.detail);
            case 'complete':
              throw new Error('unreachable: a complete check is stored');
            case 'mismatch':
            case 'tooLarge':
            case 'failed': {
              if (outcome.kind === 'tooLarge') counts.refused.tooLarge++;
              const s = statusOf(outcome);
              throw grpcError(s.code, s.message);
            }
          }
        } finally {
          release();
        }
      }),
    },
    cas: {
      FindMissingBlobs: unary<FindMissingBlobsRequest, unknown>(node, 'FindMissingBlobs', async (call) => {
        await allowed(node, call, 'read');
        const missing: Digest[] = [];
        for (const m of call.request.blobDigests ?? []) {
          const d = checkedDigest(m, 'blob_digests');
          if (hasBlob(node, d)) {
            // Found blobs are marked used: the client is about to name them in an action result.
            const key = casKey(d.hash);
            const info = isEmptyBlob(d) ? undefined : node.store.lookup(key);
            if (info) node.store.touch(key, info);
          } else missing.push(d);
        }
        return { missingBlobDigests: missing.map(digestMessage) };
      }),
      BatchUpdateBlobs: unary<BatchUpdateBlobsRequest, unknown>(node, 'BatchUpdateBlobs', async (call) => {
        await allowed(node, call, 'readwrite');
        const requests = call.request.requests ?? [];
        const release = writeSlot(node);
        try {
          const responses = [];
          for (const r of requests) {
            const d = toDigest(r.digest) ?? { hash: '', size: 0 };
            const fault = digestFault(d);
            let status: { code: number; message: string };
            if (fault !== undefined) status = { code: grpc.status.INVALID_ARGUMENT, message: fault };
            else {
              const outcome = await putBlob(node, d, r.data ?? new Uint8Array());
              if (outcome.kind === 'stored') {
                counts.cas.writes++;
                counts.cas.bytesIn += outcome.size;
              } else if (outcome.kind === 'mismatch') counts.refused.digestMismatch++;
              else if (outcome.kind === 'tooLarge') counts.refused.tooLarge++;
              status = statusOf(outcome);
            }
            responses.push({ digest: digestMessage(d), status });
          }
          return { responses };
        } finally {
          release();
        }
      }),
      BatchReadBlobs: unary<BatchReadBlobsRequest, unknown>(node, 'BatchReadBlobs', async (call) => {
        await allowed(node, call, 'read');
        const digests = (call.request.digests ?? []).map((m) => checkedDigest(m, 'digests'));
        const total = digests.reduce((n, d) => n + d.size, 0);
        if (total > MAX_BATCH_BYTES) throw grpcError(grpc.status.INVALID_ARGUMENT, `The blobs total ${total} bytes, over max_batch_total_size_bytes (${MAX_BATCH_BYTES}); read large blobs with ByteStream`);
        const responses: BatchReadEntry[] = [];
        for (const d of digests) {
          const key = casKey(d.hash);
          const info = isEmptyBlob(d) ? undefined : node.store.lookup(key);
          const data = isEmptyBlob(d) ? Buffer.alloc(0) : info && info.size === d.size ? await readEntry(node, key, info) : undefined;
          if (data === undefined) {
            counts.cas.misses++;
            responses.push({ hash: d.hash, size: d.size, code: grpc.status.NOT_FOUND, message: `No blob ${d.hash}/${d.size}` });
            continue;
          }
          if (info) node.store.touch(key, info);
          counts.cas.hits++;
          counts.cas.bytesOut += data.length;
          responses.push({ hash: d.hash, size: d.size, data, code: grpc.status.OK, message: '' });
        }
        return { responses };
      }),
    },
  };
}
