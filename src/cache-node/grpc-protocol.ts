// The gRPC side of the Remote Execution API's cache: service definitions for grpc-js built from
// the node's .proto files (protobufjs codecs), errors with the API's status codes, and the access
// check of a call (the `authorization` metadata header, as Bazel sends it with --remote_header).
//
// Action results travel as bytes: GetActionResult answers the stored serialization unchanged and
// UpdateActionResult stores the client's, so fields this node's small .proto does not list
// (execution metadata, node properties) survive a round trip.

import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { decideCacheAccess, type Need } from './access.js';
import { messageType, REAPI } from './proto.js';
import type { NodeState } from './state.js';

type Codec = { encode(value: unknown): Buffer; decode(bytes: Buffer): unknown };

/** The writer's bytes as a Buffer without a copy (grpc-js copies every message once more to frame it). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function codecOf(typeName: string): Codec {
  const type = messageType(typeName);
  return {
    encode: (value) => asBuffer(type.encode(type.fromObject(value as Record<string, unknown>)).finish()),
    decode: (bytes) => type.decode(bytes),
  };
}

/** Bytes as they are: a stored ActionResult. */
const RAW: Codec = { encode: (value) => value as Buffer, decode: (bytes) => bytes };

/** An UpdateActionResultRequest with its action_result (field 3) kept as the client's bytes. */
export interface UpdateActionResultRequest {
  readonly instanceName: string;
  readonly actionDigest: unknown;
  readonly actionResult: Buffer;
}

const UPDATE_REQUEST: Codec = {
  encode: () => {
    throw new Error('the node does not send UpdateActionResultRequest');
  },
  decode(bytes): UpdateActionResultRequest {
    const reader = protobuf.Reader.create(bytes);
    let instanceName = '';
    let actionDigest: unknown = undefined;
    let actionResult = Buffer.alloc(0);
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      switch (tag >>> 3) {
        case 1:
          instanceName = reader.string();
          break;
        case 2:
          actionDigest = messageType(`${REAPI}.Digest`).decode(reader.bytes());
          break;
        case 3:
          actionResult = Buffer.from(reader.bytes());
          break;
        default:
          reader.skipType(tag & 7);
      }
    }
    return { instanceName, actionDigest, actionResult };
  },
};

/**
 * ReadResponse { bytes data = 10 } written by hand: no object conversion, and no copy at all when
 * the handler gives the message already encoded (`{ encoded }`, read from disk behind its header).
 */
const READ_RESPONSE: Codec = {
  encode(value) {
    const encoded = (value as { encoded?: Buffer }).encoded;
    if (encoded !== undefined) return encoded;
    const data = (value as { data: Buffer }).data;
    const w = protobuf.Writer.create();
    w.uint32((10 << 3) | 2).uint32(data.length);
    const head = Buffer.from(w.finish());
    return Buffer.concat([head, data], head.length + data.length);
  },
  decode: (bytes) => messageType('google.bytestream.ReadResponse').decode(bytes),
};

/** One blob of a BatchReadBlobsResponse: its digest, its bytes when found, its status. */
export interface BatchReadEntry {
  readonly hash: string;
  readonly size: number;
  readonly data?: Buffer;
  readonly code: number;
  readonly message: string;
}

/**
 * BatchReadBlobsResponse { repeated Response responses = 1 } with Response { Digest digest = 1;
 * bytes data = 2; google.rpc.Status status = 3 } written straight to protobufjs's writer: the
 * reflection path (fromObject, then encode) walked every blob's objects again per call, and a
 * batch of small blobs is mostly such per-call work.
 */
const BATCH_READ_RESPONSE: Codec = {
  encode(value) {
    const w = protobuf.Writer.create();
    for (const e of (value as { responses: readonly BatchReadEntry[] }).responses) {
      w.uint32((1 << 3) | 2).fork();
      w.uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).string(e.hash);
      if (e.size > 0) w.uint32(2 << 3).int64(e.size);
      w.ldelim();
      if (e.data !== undefined && e.data.length > 0) w.uint32((2 << 3) | 2).bytes(e.data);
      w.uint32((3 << 3) | 2).fork();
      if (e.code !== 0) w.uint32(1 << 3).int32(e.code);
      if (e.message !== '') w.uint32((2 << 3) | 2).string(e.message);
      w.ldelim();
      w.ldelim();
    }
    return asBuffer(w.finish());
  },
  decode: (bytes) => messageType(`${REAPI}.BatchReadBlobsResponse`).decode(bytes),
};

function method(service: string, name: string, req: Codec, res: Codec, requestStream: boolean, responseStream: boolean): grpc.MethodDefinition<unknown, unknown> {
  return {
    path: `/${service}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: req.encode,
    requestDeserialize: req.decode,
    responseSerialize: res.encode,
    responseDeserialize: res.decode,
    originalName: name,
  };
}

export function serviceDefinitions(): Record<'capabilities' | 'actionCache' | 'cas' | 'byteStream', grpc.ServiceDefinition> {
  const m = (t: string) => codecOf(`${REAPI}.${t}`);
  const bs = (t: string) => codecOf(`google.bytestream.${t}`);
  return {
    capabilities: { GetCapabilities: method(`${REAPI}.Capabilities`, 'GetCapabilities', m('GetCapabilitiesRequest'), m('ServerCapabilities'), false, false) },
    actionCache: {
      GetActionResult: method(`${REAPI}.ActionCache`, 'GetActionResult', m('GetActionResultRequest'), RAW, false, false),
      UpdateActionResult: method(`${REAPI}.ActionCache`, 'UpdateActionResult', UPDATE_REQUEST, RAW, false, false),
    },
    cas: {
      FindMissingBlobs: method(`${REAPI}.ContentAddressableStorage`, 'FindMissingBlobs', m('FindMissingBlobsRequest'), m('FindMissingBlobsResponse'), false, false),
      BatchUpdateBlobs: method(`${REAPI}.ContentAddressableStorage`, 'BatchUpdateBlobs', m('BatchUpdateBlobsRequest'), m('BatchUpdateBlobsResponse'), false, false),
      BatchReadBlobs: method(`${REAPI}.ContentAddressableStorage`, 'BatchReadBlobs', m('BatchReadBlobsRequest'), BATCH_READ_RESPONSE, false, false),
    },
    byteStream: {
      Read: method('google.bytestream.ByteStream', 'Read', bs('ReadRequest'), READ_RESPONSE, false, true),
      Write: method('google.bytestream.ByteStream', 'Write', bs('WriteRequest'), bs('WriteResponse'), true, false),
      QueryWriteStatus: method('google.bytestream.ByteStream', 'QueryWriteStatus', bs('QueryWriteStatusRequest'), bs('QueryWriteStatusResponse'), false, false),
    },
  };
}

/** A refusal of this node with its status code, told apart from failures of the stream itself. */
export class Refusal extends Error implements grpc.ServerErrorResponse {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
    readonly metadata?: grpc.Metadata,
  ) {
    super(details);
  }
}

/** An error to hand to a gRPC callback (or emit on a stream). */
export function grpcError(code: grpc.status, details: string, metadata?: grpc.Metadata): Refusal {
  return new Refusal(code, details, metadata);
}

/**
 * RESOURCE_EXHAUSTED with the API's retry hint: a google.rpc.Status carrying a RetryInfo in the
 * `grpc-status-details-bin` trailer (what Google's client libraries and Bazel read), and the
 * delay in the message for people.
 */
export function resourceExhausted(details: string, retryAfterSeconds: number): Refusal {
  const retryInfo = messageType('google.rpc.RetryInfo');
  const statusType = messageType('google.rpc.Status');
  const value = retryInfo.encode(retryInfo.fromObject({ retryDelay: { seconds: retryAfterSeconds, nanos: 0 } })).finish();
  const body = statusType.encode(statusType.fromObject({ code: grpc.status.RESOURCE_EXHAUSTED, message: details, details: [{ type_url: 'type.googleapis.com/google.rpc.RetryInfo', value }] })).finish();
  const metadata = new grpc.Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(body));
  return grpcError(grpc.status.RESOURCE_EXHAUSTED, details, metadata);
}

/** What every kind of server call has: its metadata, its peer, whether it was cancelled. */
export type SurfaceCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getPeer' | 'cancelled'>;

/** The client's address from grpc-js's peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000"). */
function clientOfPeer(peer: string): string {
  const m = /^(?:ipv4:|ipv6:)?\[?([^\]]*?)\]?:\d+$/.exec(peer);
  return m?.[1] ?? peer;
}

export type CallAccess = { readonly kind: 'allow'; readonly canWrite: boolean } | { readonly kind: 'refuse'; readonly error: Refusal };

/** The HTTP cache's access rule for a call: Basic credentials in `authorization`, else the anonymous level. */
export async function callAccess(node: NodeState, call: SurfaceCall, need: Need): Promise<CallAccess> {
  const values = call.metadata.get('authorization');
  const header = typeof values[0] === 'string' ? values[0] : undefined;
  const d = await decideCacheAccess(node.config, node.checker, header, need, clientOfPeer(call.getPeer()), () => !call.cancelled);
  switch (d.kind) {
    case 'allow': {
      const level = d.user === null ? node.config.anonymousLevel : (node.config.users.get(d.user)?.level ?? 'none');
      return { kind: 'allow', canWrite: level === 'readwrite' };
    }
    case 'unauthorized':
      return { kind: 'refuse', error: grpcError(grpc.status.UNAUTHENTICATED, `${d.detail} (send "authorization: Basic ..." metadata, e.g. Bazel's --remote_header=Authorization=Basic ...)`) };
    case 'forbidden':
      return { kind: 'refuse', error: grpcError(grpc.status.PERMISSION_DENIED, d.detail) };
    case 'tooMany':
      return { kind: 'refuse', error: resourceExhausted(d.detail, d.retryAfterSeconds) };
  }
}
