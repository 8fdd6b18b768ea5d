// Mirrors another server's builds through its export API (v2): the listing of builds, then each
// build's events (a bounded number of event streams at a time), reassembled into the ingest
// NDJSON record and stored locally in listing order, so that the mirror's availability order
// follows the source's.

import type { BuildEvent, BuildStore } from '../store/types.js';
import { readSse, type SseClientOptions } from './sse-client.js';

export interface MirrorOptions {
  /** Base URL of the source server (`https://host`), or its `/build-export/v2` URL. */
  readonly source: string;
  readonly token?: string;
  /** `0`, Unix epoch ms or `now` (with follow): where the source listing starts. */
  readonly since?: string;
  /** Resume the listing after this build ID (the last one mirrored). */
  readonly afterBuild?: string;
  /** Event streams open at once (default 6, as common export clients do). */
  readonly concurrency?: number;
  /** Keep the listing open and mirror new builds as they arrive. */
  readonly follow?: boolean;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: MirrorProgress) => void;
  readonly onReconnect?: SseClientOptions['onReconnect'];
  /**
   * Give up when the source has sent nothing and could not be (re)connected for this long, in ms
   * (ExportUnreachableError). Without it, reconnects stop after maxRetries attempts in a row.
   */
  readonly giveUpAfterMs?: number;
  /** Reconnect settings passed to each stream. */
  readonly maxRetries?: number;
  readonly retryDelayMs?: number;
}

export interface MirrorProgress {
  readonly builds: number;
  readonly stored: number;
  readonly unchanged: number;
  readonly rejected: number;
  readonly events: number;
  readonly lastBuildId: string | undefined;
  /**
   * How many builds this run will have mirrored when it reaches what the source has now: the
   * builds listed so far plus the source's count of those still to send (asked with
   * `Prefer: count=exact` at every connection). Undefined when the source does not count.
   */
  readonly total?: number;
}

export interface MirrorFailure {
  readonly buildId: string;
  readonly error: string;
}

export interface MirrorResult extends MirrorProgress {
  readonly failures: readonly MirrorFailure[];
}

/** The ingest record of one build (docs: event-model.md, "Ingest format"). */
export interface IngestRecord {
  readonly buildId: string;
  readonly toolType: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly events: BuildEvent[];
}

interface BuildHeader {
  readonly buildId: string;
  readonly toolType: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
}

export function exportBase(source: string): string {
  const url = new URL(source);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = /\/build-export\/v2$/.test(path) ? path : `${path}/build-export/v2`;
  url.search = '';
  return url.toString();
}

function parseHeader(data: string): BuildHeader {
  const b = JSON.parse(data) as Partial<BuildHeader>;
  if (typeof b.buildId !== 'string' || typeof b.toolType !== 'string' || typeof b.toolVersion !== 'string' || typeof b.agentVersion !== 'string') {
    throw new Error(`Not a v2 Build message: ${data.slice(0, 200)}`);
  }
  return { buildId: b.buildId, toolType: b.toolType, toolVersion: b.toolVersion, agentVersion: b.agentVersion };
}

/** Reads one build's events stream into its ingest record. */
export async function fetchBuild(base: string, buildId: string, client: SseClientOptions): Promise<IngestRecord> {
  let header: BuildHeader | undefined;
  const events: BuildEvent[] = [];
  for await (const m of readSse(`${base}/build/${encodeURIComponent(buildId)}/events`, client)) {
    if (m.event === 'Build') header = parseHeader(m.data);
    else if (m.event === 'BuildEvent') {
      // Ids are the running number: after a resume the stream continues where it broke off.
      const seq = Number(m.id);
      const event = JSON.parse(m.data) as BuildEvent;
      if (seq === events.length + 1) events.push(event);
      else if (seq > events.length + 1) throw new Error(`Build ${buildId}: event ${seq} arrived after ${events.length}`);
    }
  }
  if (header === undefined) throw new Error(`Build ${buildId}: the events stream sent no Build message`);
  return { ...header, events };
}

export async function mirror(store: BuildStore, options: MirrorOptions): Promise<MirrorResult> {
  const base = exportBase(options.source);
  const client: SseClientOptions = {
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onReconnect ? { onReconnect: options.onReconnect } : {}),
    // With a time bound, the bound decides when to stop, not the number of attempts.
    ...(options.giveUpAfterMs !== undefined ? { giveUpAfterMs: options.giveUpAfterMs, maxRetries: options.maxRetries ?? Number.POSITIVE_INFINITY } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
  };
  const concurrency = Math.max(1, options.concurrency ?? 6);
  let progress: MirrorProgress = { builds: 0, stored: 0, unchanged: 0, rejected: 0, events: 0, lastBuildId: undefined };
  const failures: MirrorFailure[] = [];

  type Fetched = { readonly buildId: string; readonly outcome: { record: IngestRecord } | { error: Error } };

  /** Stores fetched builds, in order, in one store call (one transaction per store batch). */
  const ingest = async (batch: readonly Fetched[]): Promise<void> => {
    const records: IngestRecord[] = [];
    for (const f of batch) {
      if ('error' in f.outcome) {
        if (options.signal?.aborted) throw f.outcome.error;
        failures.push({ buildId: f.buildId, error: f.outcome.error.message });
      } else records.push(f.outcome.record);
    }
    const results = records.length === 0 ? [] : await store.ingestNdjson(records.map((r) => JSON.stringify(r)).join('\n'));
    let next = 0;
    for (const f of batch) {
      if ('error' in f.outcome) {
        progress = { ...progress, builds: progress.builds + 1, rejected: progress.rejected + 1, lastBuildId: f.buildId };
        continue;
      }
      const record = f.outcome.record;
      const result = results[next++];
      const status = result?.status ?? 'rejected';
      if (result === undefined) failures.push({ buildId: f.buildId, error: 'the store returned no result for this build' });
      else if (result.status === 'rejected') failures.push({ buildId: f.buildId, error: `${result.error} at ${result.path}` });
      progress = {
        builds: progress.builds + 1,
        stored: progress.stored + (status === 'stored' ? 1 : 0),
        unchanged: progress.unchanged + (status === 'unchanged' ? 1 : 0),
        rejected: progress.rejected + (status === 'rejected' ? 1 : 0),
        events: progress.events + record.events.length,
        lastBuildId: f.buildId,
      };
    }
    if (total !== undefined) progress = { ...progress, total };
    options.onProgress?.(progress);
  };

  // Build messages the listing has sent so far (stored or still being fetched).
  let listed = 0;
  let total: number | undefined;
  const listingClient: SseClientOptions = {
    ...client,
    headers: { prefer: 'count=exact' },
    onConnected: (headers) => {
      const count = Number(headers.get('buildscope-build-count') ?? Number.NaN);
      if (Number.isSafeInteger(count) && count >= 0) total = listed + count;
    },
  };
  const since = options.since ?? '0';
  const listingUrl = `${base}/builds/since/${encodeURIComponent(since)}${options.follow ? '?stream' : ''}`;
  // Event streams run ahead of storing by at most `concurrency`; builds are stored in listing
  // order by a consumer that runs beside the listing (so a quiet followed listing still stores
  // what it has received).
  const window: { buildId: string; done: Promise<Fetched>; fetched?: Fetched }[] = [];
  let listingDone = false;
  let itemArrived: (() => void) | undefined;
  let spaceFreed: (() => void) | undefined;
  const consumer = (async () => {
    for (;;) {
      const head = window[0];
      if (head === undefined) {
        if (listingDone) return;
        await new Promise<void>((r) => (itemArrived = r));
        continue;
      }
      head.fetched = await head.done;
      // The head and every build right behind it that has already arrived go in one store call.
      let n = 1;
      while (n < window.length && window[n]!.fetched !== undefined) n++;
      await ingest(window.slice(0, n).map((w) => w.fetched!));
      window.splice(0, n);
      spaceFreed?.();
    }
  })();
  consumer.catch(() => undefined);
  try {
    for await (const m of readSse(listingUrl, listingClient, options.afterBuild)) {
      if (m.event !== 'Build') continue;
      listed++;
      // A followed listing goes past the count it started with.
      if (total !== undefined && listed > total) total = listed;
      const { buildId } = parseHeader(m.data);
      const entry: (typeof window)[number] = {
        buildId,
        done: fetchBuild(base, buildId, client).then(
          (record): Fetched => ({ buildId, outcome: { record } }),
          (error: unknown): Fetched => ({ buildId, outcome: { error: error instanceof Error ? error : new Error(String(error)) } }),
        ),
      };
      void entry.done.then((f) => (entry.fetched = f));
      window.push(entry);
      itemArrived?.();
      while (window.length >= concurrency) {
        // Wait for room, or for the consumer to fail (then its error is thrown below).
        await Promise.race([new Promise<void>((r) => (spaceFreed = r)), consumer]);
      }
    }
  } finally {
    listingDone = true;
    itemArrived?.();
  }
  await consumer;
  return { ...progress, failures };
}
