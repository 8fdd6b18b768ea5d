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
  for (;;) {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'accept-encoding': 'gzip' };
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let response: Response;
    try {
      response = await fetch(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (++failures > maxRetries) throw err;
      options.onReconnect?.(`connect failed: ${(err as Error).message}`, lastEventId);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 10_000);
      continue;
    }
    if (response.status === 204) return;
    if (response.status === 503 || response.status === 429 || response.status === 408) {
      const after = Number(response.headers.get('retry-after'));
      await response.body?.cancel();
      if (++failures > maxRetries * 4) throw new ExportRequestError(response.status, url, 'still unavailable after retries');
      await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, 60) * 1000 : delay, options.signal);
      continue;
    }
    if (response.status !== 200 || response.body === null) {
      throw new ExportRequestError(response.status, url, await problemDetail(response));
    }
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
          delay = options.retryDelayMs ?? 250;
          yield m;
        }
      }
      return; // closed normally: everything available was sent
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (++failures > maxRetries) throw err;
      options.onReconnect?.(`stream dropped: ${(err as Error).message}`, lastEventId);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 10_000);
    }
  }
}
