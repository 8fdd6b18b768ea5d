// A resilient client of one export stream: fetch + eventsource-parser, resuming with
// Last-Event-ID after a dropped connection, honouring 204 (done, do not reconnect) and
// 503 + Retry-After (build still being stored). Gzip is negotiated and decoded by fetch.

import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseClientOptions {
  /** Sent as `Authorization: Bearer <token>` (an access key or an access token). */
  readonly token?: string;
  readonly signal?: AbortSignal;
  /** Reconnect attempts in a row without receiving a message before giving up (default 8). */
  readonly maxRetries?: number;
  /** First reconnect delay in ms, doubled per attempt up to 10 s (default 250). */
  readonly retryDelayMs?: number;
  /**
   * Give up when nothing has arrived for this long (ms) across reconnects: an unreachable or
   * silent source ends with ExportUnreachableError instead of being retried without end.
   * Default: no bound besides maxRetries.
   */
  readonly giveUpAfterMs?: number;
  /** More request headers (e.g. `Prefer`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called with the response headers of every successful (re)connection. */
  readonly onConnected?: (headers: Headers) => void;
  /** Called on every reconnect, for logs. */
  readonly onReconnect?: (reason: string, lastEventId: string | undefined) => void;
}

export interface SseMessage {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

/** The server refused the request (4xx other than 408/429): retrying would not help. */
export class ExportRequestError extends Error {
  override readonly name = 'ExportRequestError';
  constructor(
    readonly status: number,
    readonly url: string,
    detail: string,
  ) {
    super(`${url}: ${status} ${detail}`);
  }
}

/** The source could not be reached (or stayed silent) for longer than the configured bound. */
export class ExportUnreachableError extends Error {
  override readonly name = 'ExportUnreachableError';
  constructor(
    readonly url: string,
    readonly reason: string,
    readonly afterMs: number,
  ) {
    super(`cannot reach ${url}: ${reason} (gave up after ${Math.round(afterMs / 1000)} s)`);
  }
}

/** Why fetch failed, in words: undici's "fetch failed" hides the reason in its cause. */
export function networkReason(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    const words: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ENOTFOUND: 'host not found',
      EAI_AGAIN: 'host name lookup failed',
      ETIMEDOUT: 'timed out',
      EHOSTUNREACH: 'host unreachable',
      ENETUNREACH: 'network unreachable',
      ECONNRESET: 'connection reset',
      UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
      UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
      UND_ERR_SOCKET: 'connection closed',
    };
    if (code !== undefined && words[code] !== undefined) return words[code]!;
    if (e instanceof AggregateError && e.errors.length > 0) return networkReason(e.errors[0]);
    if (e.cause === undefined) return e.message;
    e = e.cause;
  }
  return err instanceof Error ? err.message : String(err);
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    }, { once: true });
  });

async function problemDetail(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const doc = JSON.parse(text) as { detail?: string; title?: string };
    return doc.detail ?? doc.title ?? text;
  } catch {
    return text.slice(0, 200);
  }
}

/**
 * Every message of the stream at `url`, in order, across reconnects. Ends when the server closes
 * the stream normally or answers 204; throws ExportRequestError on a refusal, or the last network
 * error after `maxRetries` failed attempts in a row.
 */
export async function* readSse(url: string, options: SseClientOptions = {}, startAfter?: string): AsyncGenerator<SseMessage> {
  const maxRetries = options.maxRetries ?? 8;
  let delay = options.retryDelayMs ?? 250;
  let lastEventId = startAfter;
  let failures = 0;
  // Since when the source was last reachable: reset by a connection, a message and a drop.
  let quietSince = Date.now();
  const giveUpAfter = options.giveUpAfterMs;
  /** Throws once the next attempt would start past the bound. */
  const checkBound = (reason: string, wait: number): void => {
    if (giveUpAfter !== undefined && Date.now() + wait - quietSince >= giveUpAfter) throw new ExportUnreachableError(url, reason, giveUpAfter);
  };
  for (;;) {
    const headers: Record<string, string> = { ...options.headers, accept: 'text/event-stream', 'accept-encoding': 'gzip' };
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let response: Response;
    // A connection attempt that hangs (a silent firewall) is cut at the bound too.
    const attempt = new AbortController();
    const cut = giveUpAfter === undefined ? undefined : setTimeout(() => attempt.abort(new Error('no answer in time')), Math.max(1, quietSince + giveUpAfter - Date.now()));
    const signal = options.signal ? AbortSignal.any([options.signal, attempt.signal]) : attempt.signal;
    try {
      response = await fetch(url, { headers, signal });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const reason = attempt.signal.aborted ? 'no answer in time' : networkReason(err);
      if (giveUpAfter !== undefined) checkBound(reason, attempt.signal.aborted ? 0 : delay);
      if (++failures > maxRetries) throw giveUpAfter === undefined ? err : new ExportUnreachableError(url, reason, Date.now() - quietSince);
      options.onReconnect?.(`connect failed: ${reason}`, lastEventId);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 10_000);
      continue;
    } finally {
      if (cut !== undefined) clearTimeout(cut);
    }
    if (response.status === 204) return;
    if (response.status === 503 || response.status === 429 || response.status === 408) {
      const after = Number(response.headers.get('retry-after'));
      await response.body?.cancel();
      const wait = Number.isFinite(after) && after > 0 ? Math.min(after, 60) * 1000 : delay;
      checkBound(`still unavailable (HTTP ${response.status})`, wait);
      if (++failures > maxRetries * 4) throw new ExportRequestError(response.status, url, 'still unavailable after retries');
      await sleep(wait, options.signal);
      continue;
    }
    if (response.status !== 200 || response.body === null) {
      throw new ExportRequestError(response.status, url, await problemDetail(response));
    }
    // Connected: the bound counts from here again (a quiet followed listing is not a failure).
    quietSince = Date.now();
    options.onConnected?.(response.headers);
    const queue: SseMessage[] = [];
    const parser = createParser({
      onEvent: (m: EventSourceMessage) => queue.push({ id: m.id ?? '', event: m.event ?? 'message', data: m.data }),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length > 0) {
          const m = queue.shift()!;
          if (m.id !== '') lastEventId = m.id;
          failures = 0;
          quietSince = Date.now();
          delay = options.retryDelayMs ?? 250;
          yield m;
        }
      }
      return; // closed normally: everything available was sent
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const reason = networkReason(err);
      // The source was reachable until now: the bound counts from the drop.
      quietSince = Date.now();
      if (++failures > maxRetries) throw err;
      options.onReconnect?.(`stream dropped: ${reason}`, lastEventId);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 10_000);
    }
  }
}
