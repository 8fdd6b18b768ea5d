// Calls to the server's HTTP API. Everything goes to the page's own origin; the access key (when
// signed in) travels as a Bearer token.

import { accessKey } from './auth.js';
import { ApiError } from '../../ui/api-error.js';

export { ApiError };

/** A build summary as `GET /api/builds?models=attributes` returns it. */
export interface BuildRow {
  readonly id: string;
  readonly availableAt: number;
  readonly buildToolType: string;
  readonly buildToolVersion: string;
  readonly buildAgentVersion: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

export interface ExplainResponse {
  readonly diagnostics: readonly { readonly message: string; readonly start: number; readonly end: number }[];
  readonly ast: unknown;
  readonly sql: {
    readonly sqlite: { readonly sql: string; readonly parameters: readonly unknown[] } | null;
    readonly postgres: { readonly sql: string; readonly parameters: readonly unknown[] } | null;
  } | null;
}

function headers(key: string | null, accept = 'application/json'): Record<string, string> {
  const h: Record<string, string> = { accept };
  if (key) h['authorization'] = `Bearer ${key}`;
  return h;
}

async function failure(res: Response): Promise<ApiError> {
  let detail = res.statusText || `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { detail?: unknown; title?: unknown; message?: unknown };
    const text = body.detail ?? body.message ?? body.title;
    if (typeof text === 'string' && text) detail = text;
  } catch {
    // Not JSON: keep the status text.
  }
  return new ApiError(res.status, detail);
}

export async function getJson<T>(path: string, signal?: AbortSignal, key: string | null = accessKey()): Promise<T> {
  const res = await fetch(path, { headers: headers(key), signal });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

/** The newest builds matching `query`, newest first, with their attributes. */
export function searchBuilds(query: string, maxBuilds: number, signal?: AbortSignal): Promise<BuildRow[]> {
  const params = new URLSearchParams({ query, models: 'attributes', maxBuilds: String(maxBuilds), reverse: 'true' });
  return getJson<BuildRow[]>(`/api/builds?${params}`, signal);
}

export function explain(query: string, signal?: AbortSignal): Promise<ExplainResponse> {
  return getJson<ExplainResponse>(`/api/query/explain?${new URLSearchParams({ query })}`, signal);
}

export function buildPath(id: string): string {
  return `/api/builds/${encodeURIComponent(id)}?models=attributes`;
}

export function eventsPath(id: string): string {
  return `/build-export/v2/build/${encodeURIComponent(id)}/events`;
}

export function getBuild(id: string, signal?: AbortSignal): Promise<BuildRow> {
  return getJson<BuildRow>(buildPath(id), signal);
}

/** One server-sent event of the export stream. */
export interface StreamedEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Reads a build's events from the export API (a text/event-stream that ends after the last event).
 * Stops after `limit` events so a huge build cannot freeze the page.
 */
export async function getEvents(id: string, limit: number, signal?: AbortSignal): Promise<{ events: StreamedEvent[]; truncated: boolean }> {
  const res = await fetch(eventsPath(id), { headers: headers(accessKey(), 'text/event-stream'), signal });
  if (!res.ok) throw await failure(res);
  const events: StreamedEvent[] = [];
  if (!res.body) return { events, truncated: false };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
        const parsed = parseFrame(frame);
        if (parsed) events.push(parsed);
        if (events.length >= limit) {
          await reader.cancel();
          return { events, truncated: true };
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
  const last = parseFrame(buffer);
  if (last) events.push(last);
  return { events, truncated: false };
}

function parseFrame(frame: string): StreamedEvent | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
  }
  return data.length > 0 ? { event, data: data.join('\n') } : null;
}

/** The exact number of builds the query matches, counted by the server. */
export async function countMatches(query: string, signal?: AbortSignal): Promise<number> {
  return (await getJson<{ count: number }>(`/api/search/count?${new URLSearchParams({ query })}`, signal)).count;
}

/** Matches per UTC day over the last `days` days, by outcome, aggregated by the server. */
export async function matchesPerDay(query: string, days: number, signal?: AbortSignal): Promise<{ label: string; succeeded: number; failed: number; unknown: number }[]> {
  const to = Date.now();
  const params = new URLSearchParams({ query, from: String(to - (days - 1) * 86_400_000), to: String(to), interval: 'day', tz: 'UTC' });
  return (await getJson<{ buckets: { label: string; succeeded: number; failed: number; unknown: number }[] }>(`/api/trends?${params}`, signal)).buckets;
}
