// The Build Event Service endpoint: Bazel streams each invocation here with
// `--bes_backend=grpc://HOST:PORT --bes_header=Authorization=Bearer\ KEY` (Bazel 5 and later).
// Bazel 4 has no way to send a header to a BES backend (measured: neither --remote_header nor
// anything else reaches it), so the key may also come as the keyword
// `--bes_keywords=buildscope_access_key=KEY`, which Bazel sends in the stream's first request.
// Every event is
// acknowledged by its sequence number as soon as it arrives (a slow ack holds Bazel up); when the
// invocation's stream ends, its events become one `targetbuild` build through the ordinary ingest.
// Credentials are the server's access keys and tokens; the permission is publishScan.

import * as grpc from '@grpc/grpc-js';
import type { Authenticator } from '../auth/authenticator.js';
import type { BuildStore } from '../store/types.js';
import type { Logger } from '../log.js';
import { bepToBuild, buildIdFromInvocation, invocationIdOf, type TimedBepEvent } from '../agents/bazel/bep-build.js';
import { toIngestLine } from '../agents/common-build.js';
import { BAZEL_EVENT_TYPE_URL, decodeBazelEvent, publishBuildEventService } from './protocol.js';

export interface BesOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Largest accepted message; Bazel's events can exceed gRPC's 4 MiB default. */
  readonly maxMessageBytes: number;
  readonly store: BuildStore;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
}

export interface BesServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}


interface StreamId {
  buildId?: string;
  invocationId?: string;
  component?: string;
}

interface OrderedBuildEvent {
  streamId?: StreamId;
  sequenceNumber?: string;
  event?: {
    eventTime?: { seconds?: string; nanos?: number };
    bazelEvent?: { typeUrl?: string; value?: Uint8Array };
    componentStreamFinished?: { type?: string };
  };
}

/** What one invocation has sent so far; kept across streams, since Bazel re-sends unacknowledged events on a new stream after an error. */
interface Invocation {
  readonly events: Map<number, TimedBepEvent>;
  finished: boolean;
  touched: number;
}

/** Invocations not heard of for this long are dropped (Bazel gave up on them). */
const INVOCATION_TTL_MS = 60 * 60 * 1000;

export async function startBesServer(options: BesOptions): Promise<BesServer> {
  const { store, authenticator, logger } = options;
  const invocations = new Map<string, Invocation>();
  const log = logger.child({ face: 'bes' });

  async function authorize(header: string | undefined): Promise<grpc.ServiceError | undefined> {
    const result = await authenticator.authenticate(header);
    switch (result.kind) {
      case 'authenticated':
        if (result.principal.permissions.has('publishScan')) return undefined;
        return status(grpc.status.PERMISSION_DENIED, "Publishing builds needs the permission 'publishScan'");
      case 'anonymous':
        return status(grpc.status.UNAUTHENTICATED, 'Authentication required: run Bazel with --bes_header=Authorization=Bearer\\ <access key> (Bazel 4: --bes_keywords=buildscope_access_key=<access key>)');
      case 'rejected':
        return status(grpc.status.UNAUTHENTICATED, `Authentication failed: ${result.reason}`);
      default: {
        const never: never = result;
        throw new Error(`Unknown auth result ${JSON.stringify(never)}`);
      }
    }
  }

  function invocation(id: string): Invocation {
    let inv = invocations.get(id);
    if (inv === undefined) {
      inv = { events: new Map(), finished: false, touched: Date.now() };
      invocations.set(id, inv);
    }
    inv.touched = Date.now();
    return inv;
  }

  async function storeInvocation(invocationId: string, inv: Invocation): Promise<void> {
    const events = [...inv.events.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e);
    invocations.delete(invocationId);
    try {
      const build = bepToBuild(events, buildIdFromInvocation(invocationIdOf(events) ?? invocationId));
      const [result] = await store.ingestNdjson(toIngestLine(build) + '\n');
      if (result?.status === 'rejected') log.warn({ invocationId, error: result.error, path: result.path }, 'a Bazel invocation was not stored');
      else log.info({ invocationId, buildId: build.buildId, events: events.length }, 'Bazel invocation stored');
    } catch (e) {
      log.warn({ invocationId, err: e }, 'a Bazel invocation could not be turned into a build');
    }
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': options.maxMessageBytes,
  });

  server.addService(publishBuildEventService(), {
    // Lifecycle events (build enqueued, invocation started/finished) carry nothing the build
    // stream does not and store nothing. Credentials, when sent, must be valid; Bazel 4 cannot
    // send any, so their absence is accepted here (the build stream itself always needs them).
    PublishLifecycleEvent(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const header = headerOf(call.metadata);
      if (header === undefined) {
        callback(null, {});
        return;
      }
      authorize(header).then(
        (error) => (error ? callback(error) : callback(null, {})),
        (e: unknown) => callback(status(grpc.status.INTERNAL, (e as Error).message)),
      );
    },
    PublishBuildToolEventStream(call: grpc.ServerDuplexStream<StreamRequest, unknown>) {
      let authorized: Promise<grpc.ServiceError | undefined> | undefined;
      let failed = false;
      let chain: Promise<void> = Promise.resolve();
      const finishing: Promise<void>[] = [];
      call.on('data', (request: StreamRequest) => {
        // The first request decides: it carries Bazel 4's keywords.
        authorized ??= authorize(headerOf(call.metadata) ?? keywordCredential(request.notificationKeywords));
        chain = chain.then(async () => {
          if (failed) return;
          const error = await authorized;
          if (error) {
            failed = true;
            call.emit('error', error);
            return;
          }
          const ordered = request.orderedBuildEvent ?? {};
          const streamId = ordered.streamId ?? {};
          const sequence = Number(ordered.sequenceNumber ?? 0);
          // Acknowledge first: Bazel waits for acks, never for our bookkeeping.
          call.write({ streamId, sequenceNumber: ordered.sequenceNumber ?? '0' });
          const invocationId = streamId.invocationId || streamId.buildId || '';
          const inv = invocation(invocationId);
          const e = ordered.event ?? {};
          const time = timeOf(e.eventTime);
          if (e.bazelEvent?.value !== undefined && (e.bazelEvent.typeUrl ?? BAZEL_EVENT_TYPE_URL) === BAZEL_EVENT_TYPE_URL) {
            try {
              inv.events.set(sequence, { event: decodeBazelEvent(e.bazelEvent.value), ...(time !== undefined ? { time } : {}) });
            } catch (err) {
              log.warn({ invocationId, sequence, err }, 'an undecodable Bazel event was skipped');
            }
          }
          if (e.componentStreamFinished !== undefined && !inv.finished) {
            inv.finished = true;
            finishing.push(storeInvocation(invocationId, inv));
          }
        });
      });
      call.on('end', () => {
        // The build is stored before the stream closes, so it is listed when Bazel exits.
        void chain.then(async () => {
          await Promise.all(finishing);
          if (!failed) call.end();
        });
      });
      call.on('error', (e) => log.debug({ err: e }, 'build event stream error'));
    },
  } as grpc.UntypedServiceImplementation);

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)));
  });
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, inv] of invocations) if (now - inv.touched > INVOCATION_TTL_MS) invocations.delete(id);
  }, 60_000);
  sweep.unref();
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    port,
    url: `grpc://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        // In-flight streams get a moment to finish, then are cut.
        const force = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

interface StreamRequest {
  orderedBuildEvent?: OrderedBuildEvent;
  notificationKeywords?: string[];
}

/** The keyword Bazel 4 users pass the access key in: `--bes_keywords=buildscope_access_key=KEY`. */
export const ACCESS_KEY_KEYWORD = 'buildscope_access_key';

function headerOf(metadata: grpc.Metadata): string | undefined {
  const value = metadata.get('authorization')[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

/** `Bearer KEY` from the keyword `user_keyword=buildscope_access_key=KEY` (Bazel prefixes user keywords). */
function keywordCredential(keywords: readonly string[] | undefined): string | undefined {
  for (const k of keywords ?? []) {
    const m = /^(?:user_keyword=)?buildscope_access_key=(.+)$/.exec(k);
    if (m) return `Bearer ${m[1]}`;
  }
  return undefined;
}

function status(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

function timeOf(t: { seconds?: string; nanos?: number } | undefined): number | undefined {
  if (t?.seconds === undefined) return undefined;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}
