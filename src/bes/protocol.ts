// The Build Event Service protocol files (vendored under src/bes/proto/, see
// docs/send-your-builds.md for where each comes from), loaded once: the gRPC service definition
// of `google.devtools.build.v1.PublishBuildEvent` and the decoder of Bazel's
// `build_event_stream.BuildEvent`, which travels inside `bazel_event` (a google.protobuf.Any).

import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { packageRoot } from '../agents/common-build.js';
import type { BepEvent } from './bep-build.js';

export const PROTO_DIR = join(packageRoot(), 'src', 'bes', 'proto');
export const BAZEL_EVENT_TYPE_URL = 'type.googleapis.com/build_event_stream.BuildEvent';

/** Decoded objects: camelCase names, 64-bit integers as decimal strings, enums by name (as Bazel's JSON file). */
const OBJECT_OPTIONS = { longs: String, enums: String, defaults: false, oneofs: false } as const;

let service: grpc.ServiceDefinition | undefined;

/** The `PublishBuildEvent` service definition for grpc-js. */
export function publishBuildEventService(): grpc.ServiceDefinition {
  if (service === undefined) {
    const definition = protoLoader.loadSync('google/devtools/build/v1/publish_build_event.proto', { includeDirs: [PROTO_DIR], keepCase: false, ...OBJECT_OPTIONS });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as { google: { devtools: { build: { v1: { PublishBuildEvent: { service: grpc.ServiceDefinition } } } } } };
    service = pkg.google.devtools.build.v1.PublishBuildEvent.service;
  }
  return service;
}

let bazelEvent: protobuf.Type | undefined;

function bazelEventType(): protobuf.Type {
  bazelEvent ??= protobuf.loadSync(join(PROTO_DIR, 'build_event_stream', 'build_event_stream.proto')).lookupType('build_event_stream.BuildEvent');
  return bazelEvent;
}

/** Decodes the bytes of a `bazel_event` Any into the same object shape as a line of the JSON event file. */
export function decodeBazelEvent(bytes: Uint8Array): BepEvent {
  const type = bazelEventType();
  return type.toObject(type.decode(bytes), OBJECT_OPTIONS) as BepEvent;
}

/**
 * Decodes the event when its payload is one of `payloads` (names as in the JSON form, e.g.
 * `started`), else undefined without decoding it: a scan of the message's top-level fields, so
 * that a large event of another kind (file sets, command lines) never becomes a string.
 */
export function decodeBazelEventOf(bytes: Uint8Array, payloads: readonly string[]): BepEvent | undefined {
  const type = bazelEventType();
  const wanted = new Set<number>();
  for (const name of payloads) {
    const field = type.fields[name];
    if (field !== undefined) wanted.add(field.id);
  }
  const reader = protobuf.Reader.create(bytes);
  let found = false;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (wanted.has(tag >>> 3)) found = true;
    reader.skipType(tag & 7);
  }
  return found ? decodeBazelEvent(bytes) : undefined;
}

/** Encodes a Bazel event from its JSON form (the event file's shape): for replaying recorded streams. */
export function encodeBazelEvent(json: BepEvent): Uint8Array {
  const type = bazelEventType();
  return type.encode(type.fromObject(json as Record<string, unknown>)).finish();
}
