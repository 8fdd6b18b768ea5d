// The Remote Execution API's cache messages and google.bytestream, from the small .proto files in
// proto/ (names and field numbers of the public API; docs/cache-node.md says where they come
// from), loaded once with protobufjs.

import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Digest } from './digest.js';

/** The same directory from src/cache-node/ and from the compiled dist/cache-node/. */
export const PROTO_DIR = fileURLToPath(new URL('../../src/cache-node/proto/', import.meta.url));

let root: protobuf.Root | undefined;

export function protoRoot(): protobuf.Root {
  root ??= new protobuf.Root().loadSync(['remote_execution.proto', 'bytestream.proto'].map((f) => PROTO_DIR + f));
  return root;
}

export function messageType(name: string): protobuf.Type {
  return protoRoot().lookupType(name);
}

export const REAPI = 'build.bazel.remote.execution.v2';

/** A Digest message as protobufjs decodes it (int64 as a Long or a number). */
export interface DigestMessage {
  hash?: string;
  sizeBytes?: number | protobuf.Long;
}

export function toDigest(m: DigestMessage | null | undefined): Digest | undefined {
  if (!m) return undefined;
  // int64 arrives as a Long object when the long library is loaded, else as a number.
  const raw = m.sizeBytes;
  const size = typeof raw === 'object' && raw !== null ? Number(raw.toString()) : (raw ?? 0);
  return { hash: m.hash ?? '', size };
}

export function digestMessage(d: Digest): { hash: string; sizeBytes: number } {
  return { hash: d.hash, sizeBytes: d.size };
}

interface OutputFileMessage {
  digest?: DigestMessage;
}
interface OutputDirectoryMessage {
  treeDigest?: DigestMessage;
}
export interface ActionResultMessage {
  outputFiles?: OutputFileMessage[];
  outputDirectories?: OutputDirectoryMessage[];
  stdoutDigest?: DigestMessage;
  stderrDigest?: DigestMessage;
}
interface DirectoryMessage {
  files?: { digest?: DigestMessage }[];
}
export interface TreeMessage {
  root?: DirectoryMessage;
  children?: DirectoryMessage[];
}

export function decodeActionResult(bytes: Uint8Array): ActionResultMessage {
  return messageType(`${REAPI}.ActionResult`).decode(bytes) as unknown as ActionResultMessage;
}

export function decodeTree(bytes: Uint8Array): TreeMessage {
  return messageType(`${REAPI}.Tree`).decode(bytes) as unknown as TreeMessage;
}
