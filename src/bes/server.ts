// The Build Event Service endpoint: Bazel streams each invocation here with
// `--bes_backend=grpc://HOST:PORT --bes_header=Authorization=Bearer\ KEY` (Bazel 5 and later).
// Bazel 4 has no way to send a header to a BES backend (measured: neither --remote_header nor
// anything else reaches it), so the key may also come as the keyword
// `--bes_keywords=buildscope_access_key=KEY`, which Bazel sends in the stream's first request.
// Every event is
// acknowledged by its sequence number as soon as it is kept (a slow ack holds Bazel up); an
// invocation waits on disk, reduced to what its build is made of and within bounds
// (invocations.ts), and when it finishes its events become one `targetbuild` build through the
// ordinary ingest, with the publisher's project rules, as over REST; its test reports and logs
// are read first from the cache nodes of `bes.cacheNodes` (test-outputs.ts, never holding up an
// acknowledgement). Credentials are the server's
// access keys and tokens; the permission is publishScan; admission.ts checks them before a message
// is read where it can. A refused build ends the stream with an error status, which Bazel shows.

import * as grpc from '@grpc/grpc-js';
import PQueue from 'p-queue';
import type { Authenticator } from '../auth/authenticator.js';
import { visibilityOf, type Principal } from '../auth/types.js';
import type { BesSection } from '../config.js';
import type { BuildStore } from '../store/types.js';
import { seesEverything } from '../store/search/visibility.js';
import type { Logger } from '../log.js';
import { BepError, bepToBuild, buildIdFromInvocation, invocationIdOf, READ_PAYLOADS } from './bep-build.js';
import { toIngestLine } from '../agents/common-build.js';
import { admissionInterceptor, callerOf, keywordCredential, status } from './admission.js';
import { InvocationSpool, type Invocation, type Refusal } from './invocations.js';
import { createTestOutputReader, readFetched, type Fetched } from './test-outputs.js';
import { BAZEL_EVENT_TYPE_URL, decodeBazelEventOf, publishBuildEventService } from './protocol.js';


/** What the endpoint is made of: its settings, the store builds go to and the server's one authenticator. */
export interface BesEndpointOptions extends Omit<BesSection, 'port'> {
  readonly store: BuildStore;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
}

export interface BesOptions extends BesEndpointOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
}

/**
 * The endpoint opened but not yet listening: the composition root (openServer) opens it with the
 * server's services, and the server listens on it once the HTTP app is ready.
 */
export interface BesEndpoint {
  /** 0 picks a free port. */
  listen(host: string, port: number): Promise<BesServer>;
  /** Unfinished invocations and the bytes they keep on disk. */
  stats(): { invocations: number; bytes: number };
  close(): Promise<void>;
}

export interface BesServer {
  readonly port: number;
  readonly url: string;
  /** Unfinished invocations and the bytes they keep on disk. */
  stats(): { invocations: number; bytes: number };
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

interface StreamRequest {
  orderedBuildEvent?: OrderedBuildEvent;
  notificationKeywords?: string[];
}

/** The endpoint, opened and listening (as `openServer` and `startServer` do it in two steps). */
export async function startBesServer(options: BesOptions): Promise<BesServer> {
  return openBesEndpoint(options).listen(options.host, options.port);
}

export function openBesEndpoint(options: BesEndpointOptions): BesEndpoint {
  const { store, authenticator, logger } = options;
  const log = logger.child({ face: 'bes' });
  const spool = new InvocationSpool({
    maxInvocationBytes: options.maxInvocationBytes,
    maxOpenInvocations: options.maxOpenInvocations,
    maxOpenInvocationsPerUser: options.maxOpenInvocationsPerUser,
    retryWindowMs: options.retryWindowSeconds * 1000,
  });
  // Finished invocations become builds one at a time: what a conversion holds in memory is one
  // invocation's reduced events, however many finish together.
  const conversions = new PQueue({ concurrency: 1 });
  // An invocation's test outputs are read before its turn to be converted, two invocations at a
  // time: the reads of the next overlap the conversion of the current, and what is held in memory
  // is at most two invocations' outputs (an invocation keeps its place until it is stored). A
  // slow cache node holds its invocations up to bes.testOutputTimeoutSeconds.
  const outputReader = createTestOutputReader(options);
  const outputReads = new PQueue({ concurrency: 2 });

  async function readTestOutputs(inv: Invocation): Promise<Map<string, Fetched>> {
    let fetched: Map<string, Fetched>;
    try {
      fetched = await outputReader.fetch(await spool.testOutputs(inv));
    } catch (err) {
      // The build is stored without them.
      log.warn({ invocationId: inv.id, err }, "a Bazel invocation's test outputs could not be read");
      return new Map();
    }
    const unread = [...fetched.values()].filter((f) => 'unread' in f).map((f) => (f as { unread: string }).unread);
    if (unread.length > 0) log.info({ invocationId: inv.id, read: fetched.size - unread.length, unread }, "some of a Bazel invocation's test outputs were not read");
    return fetched;
  }

  /** The finished invocation stored as a build; the status to end its stream with when it was not. */
  async function storeInvocation(inv: Invocation, publisher: Principal, outputs: ReadonlyMap<string, Fetched>): Promise<grpc.ServiceError | undefined> {
    const events = spool.take(inv);
    const visibility = visibilityOf(publisher);
    // A publisher restricted to projects never names a new build's ID (the ingest's rule, as over
    // REST): her build gets an ID of the server's choosing.
    const named = seesEverything(visibility);
    let build;
    try {
      build = bepToBuild(events, buildIdFromInvocation(invocationIdOf(events) ?? inv.id), { readUri: readFetched(outputs) });
    } catch (e) {
      if (!(e instanceof BepError)) throw e;
      return status(grpc.status.INVALID_ARGUMENT, `The invocation is not a build: ${e.message}`);
    }
    const { buildId, ...unnamed } = build;
    const [result] = await store.ingestNdjson(toIngestLine(named ? build : (unnamed as typeof build)) + '\n', { visibility });
    if (result === undefined || result.status === 'rejected') {
      const error = result?.error ?? 'nothing was stored';
      log.warn({ invocationId: inv.id, user: publisher.user, error, path: result?.path }, 'a Bazel invocation was not stored');
      // Not PERMISSION_DENIED: Bazel retries every status but these two, and a refusal is final.
      return status(named ? grpc.status.INVALID_ARGUMENT : grpc.status.FAILED_PRECONDITION, `The build was not stored: ${error}`);
    }
    log.info({ invocationId: inv.id, buildId: result.buildId ?? buildId, events: events.length }, 'Bazel invocation stored');
    return undefined;
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': options.maxMessageBytes,
    interceptors: [admissionInterceptor(authenticator, options.maxUnauthenticatedMessageBytes)],
  });

  server.addService(publishBuildEventService(), {
    // Lifecycle events (build enqueued, invocation started/finished) carry nothing the build
    // stream does not and store nothing. Credentials, when sent, were checked by the interceptor;
    // Bazel 4 cannot send any, so their absence is accepted here (the build stream always needs them).
    PublishLifecycleEvent(_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      callback(null, {});
    },
    PublishBuildToolEventStream(call: grpc.ServerDuplexStream<StreamRequest, unknown>) {
      let failed = false;
      let inv: Invocation | undefined;
      let chain: Promise<void> = Promise.resolve();
      let finishing: Promise<grpc.ServiceError | undefined> | undefined;
      let publisher: Principal | undefined;
      const fail = (error: grpc.ServiceError): void => {
        failed = true;
        call.emit('error', error);
      };
      let detached = false;
      const detach = (): void => {
        if (detached || inv === undefined) return;
        detached = true;
        spool.detach(inv);
      };

      const receive = async (request: StreamRequest): Promise<void> => {
        if (failed) return;
        if (publisher === undefined) {
          // The first message decides when the metadata did not: it carries Bazel 4's keywords.
          const admission = await callerOf(authenticator, call.metadata, () => keywordCredential(request.notificationKeywords));
          if (!admission.ok) return fail(admission.error);
          publisher = admission.principal;
        }
        const ordered = request.orderedBuildEvent ?? {};
        const streamId = ordered.streamId ?? {};
        const sequence = Number(ordered.sequenceNumber ?? Number.NaN);
        if (!Number.isSafeInteger(sequence) || sequence < 1) return fail(status(grpc.status.INVALID_ARGUMENT, `sequence_number must be a positive integer, not ${JSON.stringify(ordered.sequenceNumber ?? null)}`));
        const invocationId = streamId.invocationId || streamId.buildId || '';
        if (invocationId === '' || invocationId.length > 256) return fail(status(grpc.status.INVALID_ARGUMENT, 'stream_id needs an invocation_id (or build_id) of at most 256 characters'));
        if (inv === undefined) {
          const opened = spool.attach(invocationId, publisher.user);
          if (!opened.ok) return fail(refusalStatus(opened.refusal));
          inv = opened.invocation;
        } else if (inv.id !== invocationId) {
          return fail(status(grpc.status.INVALID_ARGUMENT, `A stream carries one invocation: ${JSON.stringify(inv.id)}, not ${JSON.stringify(invocationId)}`));
        }
        if (inv.finished) return fail(status(grpc.status.FAILED_PRECONDITION, 'The invocation has finished'));
        const e = ordered.event ?? {};
        if (e.bazelEvent?.value !== undefined && (e.bazelEvent.typeUrl ?? BAZEL_EVENT_TYPE_URL) === BAZEL_EVENT_TYPE_URL) {
          let decoded;
          try {
            // Only events the build is made of are decoded (a large file set never becomes a string).
            decoded = decodeBazelEventOf(e.bazelEvent.value, READ_PAYLOADS);
          } catch (err) {
            log.warn({ invocationId, sequence, err }, 'an undecodable Bazel event was skipped');
          }
          if (decoded !== undefined) {
            const refused = spool.add(inv, sequence, decoded, timeOf(e.eventTime));
            if (refused !== undefined) {
              spool.drop(inv);
              return fail(refusalStatus(refused));
            }
          }
        }
        // Acknowledged once kept: Bazel waits for acks, never for the build's conversion.
        call.write({ streamId, sequenceNumber: String(sequence) });
        if (e.componentStreamFinished !== undefined) {
          const finished = inv;
          const by = publisher;
          // Nothing more is added to it while its conversion waits its turn.
          finished.finished = true;
          finishing = outputReads
            .add(async () => {
              const outputs = await readTestOutputs(finished);
              return conversions.add(() => storeInvocation(finished, by, outputs));
            })
            .catch((err: unknown) => {
              log.warn({ invocationId, err }, 'a Bazel invocation could not be stored');
              return status(grpc.status.UNAVAILABLE, `The build could not be stored now: ${(err as Error).message}`);
            });
        }
      };

      call.on('data', (request: StreamRequest) => {
        chain = chain.then(() => receive(request));
      });
      call.on('end', () => {
        // The build is stored before the stream closes, so it is listed when Bazel exits.
        void chain.then(async () => {
          const error = await finishing;
          detach();
          if (failed) return;
          if (error !== undefined) fail(error);
          else call.end();
        });
      });
      call.on('error', (e) => log.debug({ err: e }, 'build event stream error'));
      call.on('cancelled', () => void chain.then(detach));
      call.on('close', () => void chain.then(detach));
    },
  } as grpc.UntypedServiceImplementation);

  let sweep: NodeJS.Timeout | undefined;
  const stats = () => spool.stats();
  let closing: Promise<void> | undefined;
  // Once, whoever asks first (the listening server or the composition root that opened it).
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      clearInterval(sweep);
      // In-flight streams get a moment to finish, then are cut.
      const force = setTimeout(() => server.forceShutdown(), 2000);
      server.tryShutdown(() => {
        clearTimeout(force);
        spool.close();
        outputReader.close();
        resolve();
      });
    }));
  return {
    stats,
    close,
    async listen(host, port) {
      const bound = await new Promise<number>((resolve, reject) => {
        server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)));
      });
      sweep = setInterval(() => spool.sweep(), Math.min(60_000, options.retryWindowSeconds * 500));
      sweep.unref();
      const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
      return { port: bound, url: `grpc://${shownHost}:${bound}`, stats, close };
    },
  };
}

function timeOf(t: { seconds?: string; nanos?: number } | undefined): number | undefined {
  if (t?.seconds === undefined) return undefined;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/**
 * The status a refused invocation ends its stream with: what Bazel prints as the upload's failure.
 * Bazel retries a stream on every status but INVALID_ARGUMENT and FAILED_PRECONDITION, so a limit
 * that may pass (invocations open now) is RESOURCE_EXHAUSTED and one that will not is FAILED_PRECONDITION.
 */
function refusalStatus(refusal: Refusal): grpc.ServiceError {
  switch (refusal.kind) {
    case 'otherUser':
      return status(grpc.status.PERMISSION_DENIED, 'Another user is streaming this invocation');
    case 'tooManyOfUser':
      return status(grpc.status.RESOURCE_EXHAUSTED, `This user already streams ${refusal.limit} unfinished invocations (bes.maxOpenInvocationsPerUser); retry when one has finished`);
    case 'tooMany':
      return status(grpc.status.RESOURCE_EXHAUSTED, `The endpoint already holds ${refusal.limit} unfinished invocations (bes.maxOpenInvocations); retry later`);
    case 'tooLarge':
      // Final (Bazel would re-send what was not acknowledged into an invocation that is gone).
      return status(grpc.status.FAILED_PRECONDITION, `The invocation's events exceed ${refusal.limit} bytes (bes.maxInvocationBytes) and were dropped`);
    default: {
      const never: never = refusal;
      throw new Error(`Unknown refusal ${JSON.stringify(never)}`);
    }
  }
}
