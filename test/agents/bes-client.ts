// A gRPC client of the Build Event Service endpoint for the tests: streams Bazel events as Bazel
// does (sequence numbers from 1, the keywords in the first request, a componentStreamFinished at
// the end) or any hostile variation of it, and collects the acknowledgements and the final status.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { BepEvent } from '../../src/bes/bep-build.js';
import { BAZEL_EVENT_TYPE_URL, encodeBazelEvent, publishBuildEventService } from '../../src/bes/protocol.js';

const RECORDED = resolve('test/agents/fixtures/bazel/failing-test.bep.json');
/** A real Bazel 4.2.3 stream of the fixture workspace with a failing test. */
export const recorded = (): BepEvent[] => readFileSync(RECORDED, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as BepEvent);

/** The stream with another invocation ID (a different build), and optionally other build metadata. */
export function withInvocation(events: BepEvent[], uuid: string, metadata?: Record<string, string>): BepEvent[] {
  return events.map((e) => {
    if (e['started']) return { ...e, started: { ...(e['started'] as object), uuid } };
    if (metadata !== undefined && e['buildMetadata']) return { ...e, buildMetadata: { metadata } };
    return e;
  });
}

export const invocationOf = (events: readonly BepEvent[]): string => events.map((e) => (e['started'] as { uuid?: string } | undefined)?.uuid).find(Boolean)!;

export interface StreamResult {
  readonly acks: number[];
  readonly error?: grpc.ServiceError;
}

export type BesClient = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

const Client = grpc.makeGenericClientConstructor(publishBuildEventService(), 'PublishBuildEvent');

export function besClient(url: string): BesClient {
  return new Client(url.replace('grpc://', ''), grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 256 * 1024 * 1024 }) as never;
}

/** One request of a stream, as Bazel would send it. */
export function request(invocationId: string, sequence: number | string, event: BepEvent | 'finished', keywords?: string[]): Record<string, unknown> {
  const streamId = { buildId: `b-${invocationId}`, invocationId, component: 'TOOL' };
  // Event times as Bazel would send them again on a retry: the same each time.
  const time = { seconds: String(1_795_000_000 + Number(sequence)), nanos: 0 };
  return {
    orderedBuildEvent: {
      streamId,
      sequenceNumber: String(sequence),
      event: event === 'finished' ? { eventTime: time, componentStreamFinished: { type: 'FINISHED' } } : { eventTime: time, bazelEvent: { typeUrl: BAZEL_EVENT_TYPE_URL, value: Buffer.from(encodeBazelEvent(event)) } },
    },
    ...(keywords !== undefined ? { notificationKeywords: keywords } : {}),
  };
}

export interface StreamOptions {
  readonly header?: string;
  /** `buildscope_access_key=KEY`, sent as Bazel 4 sends --bes_keywords. */
  readonly keyword?: string;
  /** Sequence number of the first event (a resumed stream starts after what was acknowledged). */
  readonly from?: number;
  /** Whether to send componentStreamFinished and half-close (default true). */
  readonly finish?: boolean;
}

/** Streams `events` of one invocation; resolves with the acks and the status when the server ends the call. */
export function stream(client: BesClient, events: readonly BepEvent[], options: StreamOptions = {}, invocationId = invocationOf(events)): Promise<StreamResult> {
  const { call, done } = open(client, options.header);
  const from = options.from ?? 1;
  events.forEach((e, i) => call.write(request(invocationId, from + i, e, i === 0 && from === 1 ? ['command_name=test', 'protocol_name=BEP', ...(options.keyword ? [`user_keyword=${options.keyword}`] : [])] : undefined)));
  if (options.finish ?? true) {
    call.write(request(invocationId, from + events.length, 'finished'));
    call.end();
  } else {
    // Unfinished: half-close without the final event, as a stream cut short.
    call.end();
  }
  return done;
}

/** An open stream: write raw requests, end it, and wait for its status. */
export function open(client: BesClient, header?: string): { call: grpc.ClientDuplexStream<unknown, { sequenceNumber: string }>; done: Promise<StreamResult> } {
  const metadata = new grpc.Metadata();
  if (header) metadata.set('authorization', header);
  const call = client['PublishBuildToolEventStream']!(metadata) as grpc.ClientDuplexStream<unknown, { sequenceNumber: string }>;
  const acks: number[] = [];
  const done = new Promise<StreamResult>((resolve) => {
    call.on('data', (ack) => acks.push(Number(ack.sequenceNumber)));
    call.on('error', (error: grpc.ServiceError) => resolve({ acks, error }));
    call.on('end', () => resolve({ acks }));
  });
  return { call, done };
}
