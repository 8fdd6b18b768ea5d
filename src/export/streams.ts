// The export streams over the BuildStore: what to send, in which order, from where to resume.
// HTTP-free: the plugin in src/http/export-plugin.ts turns a Plan into a response.
//
// A request is planned before any byte is written, so that every refusal (400/404/503) and the
// 204 of a finished stream can still be answered with a status code; only then does `run` write
// the messages to an SseSink, awaiting the socket whenever it is full.

import type { CheckedExpr } from '../query/checked.js';
import { NAMED_FIELDS } from '../query/catalog.js';
import type { BuildEventText, BuildStore, BuildSummary, Visibility } from '../store/types.js';
import { buildEventTextMessage, buildMessage, V1_TOOL_TYPE, type ApiVersion } from './messages.js';
import { parseBuildId, parseEventsResume, refuse, type Refusal, type SinceDate } from './params.js';
import type { SseSink } from './sink.js';
import { formatComment } from './sse.js';

export type Plan =
  | Refusal
  | { readonly kind: 'noContent'; readonly reason: string }
  | {
      readonly kind: 'stream';
      run(sink: SseSink): Promise<void>;
      cancel(): Promise<void>;
      /** Listings asked to count: how many builds were available to send when the listing started. */
      readonly count?: number;
    };

export type ListingStart = { readonly kind: 'since'; readonly date: SinceDate } | { readonly kind: 'sinceBuild'; readonly buildId: string };

export interface ListingRequest {
  readonly version: ApiVersion;
  readonly visibility: Visibility;
  readonly start: ListingStart;
  /** The checked `query` parameter, if any. */
  readonly query?: CheckedExpr;
  readonly stream: boolean;
  readonly lastEventId?: string;
  readonly heartbeatMs: number;
  readonly retryAfterSeconds: number;
  /** Count the builds available to send now (`Prefer: count=exact`), for a client's total and ETA. */
  readonly count?: boolean;
}

export interface EventsRequest {
  readonly version: ApiVersion;
  readonly visibility: Visibility;
  readonly buildId: string;
  readonly eventTypes?: readonly string[];
  readonly lastEventId?: string;
  readonly retryAfterSeconds: number;
}

const NO_SPAN = { start: 0, end: 0 } as const;

/** `buildTool:native`, the filter that keeps v1 listings to the builds v1 knows. */
function nativeOnly(): CheckedExpr {
  const field = NAMED_FIELDS.buildTool;
  return { kind: 'term', field, predicate: { kind: 'pattern', pattern: { segments: [V1_TOOL_TYPE], text: V1_TOOL_TYPE } }, span: NO_SPAN };
}

function listingQuery(version: ApiVersion, query: CheckedExpr | undefined): CheckedExpr | undefined {
  const user = query === undefined || query.kind === 'all' ? undefined : query;
  if (version === 2) return user;
  return user === undefined ? nativeOnly() : { kind: 'and', operands: [nativeOnly(), user], span: NO_SPAN };
}

function unavailable(buildId: string, retryAfterSeconds: number): Refusal {
  return { ...refuse('not-ready', `Build ${buildId} is still being stored; retry later`), retryAfterSeconds };
}

/** The seq of an available, visible build, or the refusal that explains why there is none. */
async function seqOf(store: BuildStore, buildId: string, visibility: Visibility, retryAfterSeconds: number, what: string): Promise<number | Refusal> {
  const state = await store.buildState(buildId, visibility);
  switch (state) {
    case 'missing': {
      // A build deleted by retention still marks its place: the stream goes on with the next one.
      const deleted = await store.deletedBuild(buildId, visibility);
      if (deleted?.seq !== undefined && deleted.seq !== null) return deleted.seq;
      return refuse('not-found', `${what} ${buildId} does not exist or is not visible to you`);
    }
    case 'incomplete':
      return unavailable(buildId, retryAfterSeconds);
    case 'available': {
      const build = await store.getBuild(buildId, visibility);
      // Completed between the two calls in another process: the build is there now; or it vanished.
      if (build === undefined) return refuse('not-found', `${what} ${buildId} does not exist or is not visible to you`);
      return build.seq;
    }
  }
}

export async function planListing(store: BuildStore, request: ListingRequest): Promise<Plan> {
  const query = listingQuery(request.version, request.query);
  let fromInstant: number | undefined;
  let afterSeq: number | undefined;
  switch (request.start.kind) {
    case 'since':
      if (request.start.date.kind === 'now') afterSeq = await store.latestSeq();
      else if (request.start.date.at > 0) fromInstant = request.start.date.at;
      break;
    case 'sinceBuild': {
      const seq = await seqOf(store, request.start.buildId, request.visibility, request.retryAfterSeconds, 'Build');
      if (typeof seq !== 'number') return seq;
      afterSeq = seq;
      break;
    }
  }
  const lastEventId = request.lastEventId?.trim() ?? '';
  if (lastEventId !== '') {
    const id = parseBuildId(lastEventId, 'Last-Event-ID');
    if (typeof id !== 'string') return { ...id, detail: `Invalid Last-Event-ID ${JSON.stringify(lastEventId)}: expected the ID of the last Build received` };
    const seq = await seqOf(store, id, request.visibility, request.retryAfterSeconds, 'Last-Event-ID names build');
    // An unknown build named by the client's own header is a bad header, not a missing resource.
    if (typeof seq !== 'number') return seq.error === 'not-found' ? refuse('invalid-parameter', seq.detail, seq.extensions) : seq;
    // A resume continues right after the named build, whatever the original start was: `now`
    // must not be evaluated again (builds stored while the client was away would be skipped),
    // and an instant or a start build is already behind the named build.
    afterSeq = seq;
    fromInstant = undefined;
  }

  const scan = (after: number | undefined): AsyncIterator<BuildSummary> =>
    store
      .streamBuilds({
        visibility: request.visibility,
        ...(fromInstant !== undefined ? { fromInstant } : {}),
        ...(after !== undefined ? { afterSeq: after } : {}),
        ...(query !== undefined ? { query } : {}),
      })
      [Symbol.asyncIterator]();

  // Counted before the scan starts, so that it is never below what the answer sends.
  const count = request.count
    ? await store.countBuilds({
        visibility: request.visibility,
        ...(fromInstant !== undefined ? { fromInstant } : {}),
        ...(afterSeq !== undefined ? { afterSeq } : {}),
        ...(query !== undefined ? { query } : {}),
      })
    : undefined;

  if (!request.stream) {
    // Everything available now, then close; nothing at all is a finished stream: 204.
    const builds = scan(afterSeq);
    const first = await builds.next();
    if (first.done) return { kind: 'noContent', reason: 'no builds after the requested point' };
    return {
      kind: 'stream',
      ...(count !== undefined ? { count } : {}),
      run: async (sink) => {
        await pump(sink, builds, first.value, request.version);
        await sink.end();
      },
      cancel: async () => void (await builds.return?.()),
    };
  }

  return {
    kind: 'stream',
    ...(count !== undefined ? { count } : {}),
    cancel: async () => undefined,
    run: async (sink) => {
      let lastSent = afterSeq;
      let lastBeat = Date.now();
      let scanNeeded = true;
      let horizon = 0;
      while (!sink.closed) {
        if (scanNeeded) {
          // Read the newest seq before scanning: whatever the scan skips (filtered out or not
          // visible) up to it need not wake us again.
          horizon = await store.latestSeq();
          const builds = scan(lastSent);
          const first = await builds.next();
          if (!first.done) lastSent = await pump(sink, builds, first.value, request.version);
          scanNeeded = false;
        }
        const now = Date.now();
        if (now - lastBeat >= request.heartbeatMs) {
          lastBeat = now;
          if (!sink.write(formatComment('heartbeat'))) await sink.drained();
          continue;
        }
        const waitMs = Math.max(1, request.heartbeatMs - (now - lastBeat));
        scanNeeded = await store.waitForNewBuilds(Math.max(horizon, lastSent ?? 0), waitMs, sink.signal);
      }
    },
  };
}

/** Writes builds to the sink until the iterator ends or the client leaves; returns the last seq sent. */
async function pump(sink: SseSink, builds: AsyncIterator<BuildSummary>, first: BuildSummary, version: ApiVersion): Promise<number> {
  let build = first;
  try {
    for (;;) {
      if (sink.closed) return build.seq;
      if (!sink.write(buildMessage(version, build))) await sink.drained();
      const next = await builds.next();
      if (next.done) return build.seq;
      build = next.value;
    }
  } finally {
    if (sink.closed) await builds.return?.();
  }
}

export async function planEvents(store: BuildStore, request: EventsRequest): Promise<Plan> {
  const { buildId, visibility } = request;
  const state = await store.buildState(buildId, visibility);
  switch (state) {
    case 'missing':
      return refuse('not-found', `Build ${buildId} does not exist or is not visible to you`);
    case 'incomplete':
      return unavailable(buildId, request.retryAfterSeconds);
    case 'available':
      break;
  }
  const build = await store.getBuild(buildId, visibility);
  if (build === undefined) return refuse('not-found', `Build ${buildId} does not exist or is not visible to you`);
  if (request.version === 1 && build.toolType !== V1_TOOL_TYPE) {
    return refuse('invalid-parameter', `Build ${buildId} is a ${build.toolType} build; version 1 of the export API serves ${V1_TOOL_TYPE} builds only, use /build-export/v2`, {
      toolType: build.toolType,
    });
  }
  const resume = parseEventsResume(request.lastEventId, buildId);
  if (resume.kind === 'refusal') return resume;

  const events = store.streamEventTexts(buildId, request.eventTypes ? { eventTypes: request.eventTypes } : {})[Symbol.asyncIterator]();
  const skip = resume.kind === 'afterEvent' ? resume.sequence : 0;
  // Skip what the client has, and peek one: a resumed stream with nothing left is answered 204.
  let sequence = 0;
  let next = await events.next();
  while (!next.done && sequence < skip) {
    sequence++;
    next = await events.next();
  }
  if (resume.kind !== 'start' && next.done) return { kind: 'noContent', reason: 'every event of the build was sent' };
  const firstEvent: IteratorResult<BuildEventText> = next;
  return {
    kind: 'stream',
    cancel: async () => void (await events.return?.()),
    run: async (sink) => {
      try {
        if (resume.kind === 'start' && !sink.write(buildMessage(request.version, build))) await sink.drained();
        let current = firstEvent;
        while (!current.done && !sink.closed) {
          sequence++;
          if (!sink.write(buildEventTextMessage(sequence, current.value))) await sink.drained();
          current = await events.next();
        }
      } finally {
        if (sink.closed) await events.return?.();
      }
      await sink.end();
    },
  };
}
