// Parsing of the export API's path parameters, query parameters and Last-Event-ID header.
// Every parser returns a value or a Refusal (a problem document to answer), never throws: a plan is
// made before the answer starts, and a refusal is one of its outcomes. A refusal carries the kind of
// domain error it is (src/errors/domain.ts), which gives its status and problem type.

import { answerOf, type DomainErrorKind } from '../errors/domain.js';
import { BUILD_ID_PATTERN, BUILD_ID_WORDS } from '../store/ingest/build-id.js';

/** The kinds of refusal of the export API. */
export type RefusalKind = Extract<DomainErrorKind, 'invalid-parameter' | 'invalid-query' | 'not-found' | 'not-ready'>;

export interface Refusal {
  readonly kind: 'refusal';
  readonly error: RefusalKind;
  /** The HTTP status of `error` (answerOf). */
  readonly status: number;
  readonly detail: string;
  readonly retryAfterSeconds?: number;
  readonly extensions?: Record<string, unknown>;
}

export function refuse(error: RefusalKind, detail: string, extensions?: Record<string, unknown>): Refusal {
  const status = answerOf(error).status;
  return extensions === undefined ? { kind: 'refusal', error, status, detail } : { kind: 'refusal', error, status, detail, extensions };
}

export function isRefusal(x: unknown): x is Refusal {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'refusal';
}

/** Where a listing starts: at an instant (inclusive) or after the newest build at request time. */
export type SinceDate = { readonly kind: 'instant'; readonly at: number } | { readonly kind: 'now' };

const MAX_EPOCH_DIGITS = 16; // beyond Number.MAX_SAFE_INTEGER's 16 digits nothing is a valid instant

/** `:date` of /builds/since/:date: `0`, Unix epoch milliseconds, or `now`; not in the future. */
export function parseSinceDate(text: string, now: number): SinceDate | Refusal {
  if (text === 'now') return { kind: 'now' };
  if (!/^[0-9]+$/.test(text) || text.length > MAX_EPOCH_DIGITS) {
    return refuse('invalid-parameter', `Invalid date ${JSON.stringify(text)}: expected 0, a Unix epoch time in milliseconds, or now`, { parameter: 'date' });
  }
  const at = Number(text);
  if (!Number.isSafeInteger(at)) return refuse('invalid-parameter', `Invalid date ${JSON.stringify(text)}: out of range`, { parameter: 'date' });
  if (at > now) {
    return refuse('invalid-parameter', `Invalid date ${text}: it is in the future (server time is ${now}); use now with stream to wait for new builds`, {
      parameter: 'date',
      serverTime: now,
    });
  }
  return { kind: 'instant', at };
}

export { BUILD_ID_PATTERN };

export function parseBuildId(text: string, parameter = 'buildId'): string | Refusal {
  if (!BUILD_ID_PATTERN.test(text)) {
    return refuse('invalid-parameter', `Invalid build ID ${JSON.stringify(text)}: expected ${BUILD_ID_WORDS}`, { parameter });
  }
  return text;
}

/** `eventTypes`: comma-separated, case-sensitive; blanks around names are dropped. Absent or empty: all. */
export function parseEventTypes(value: unknown): readonly string[] | undefined | Refusal {
  if (value === undefined) return undefined;
  const values = Array.isArray(value) ? value : [value];
  const names: string[] = [];
  for (const v of values) {
    if (typeof v !== 'string') return refuse('invalid-parameter', 'Invalid eventTypes: expected a comma-separated list of event types', { parameter: 'eventTypes' });
    for (const part of v.split(',')) {
      const name = part.trim();
      if (name === '') continue;
      if (!/^[A-Za-z0-9_.$-]+$/.test(name)) {
        return refuse('invalid-parameter', `Invalid event type ${JSON.stringify(name)} in eventTypes`, { parameter: 'eventTypes' });
      }
      names.push(name);
    }
  }
  return names.length === 0 ? undefined : [...new Set(names)];
}

/** Last-Event-ID of an events stream: the build ID (the Build message was received) or a running number. */
export type EventsResume = { readonly kind: 'start' } | { readonly kind: 'afterBuild' } | { readonly kind: 'afterEvent'; readonly sequence: number };

export function parseEventsResume(header: string | undefined, buildId: string): EventsResume | Refusal {
  const id = header?.trim() ?? '';
  if (id === '') return { kind: 'start' };
  if (id === buildId) return { kind: 'afterBuild' };
  if (/^[0-9]{1,15}$/.test(id)) {
    const sequence = Number(id);
    return sequence === 0 ? { kind: 'afterBuild' } : { kind: 'afterEvent', sequence };
  }
  return refuse('invalid-parameter', `Invalid Last-Event-ID ${JSON.stringify(id)}: expected this build's ID or an event sequence number`, { header: 'Last-Event-ID' });
}

/** `stream`: present with any value (even empty) means stream. */
export function isStreaming(query: Record<string, unknown>): boolean {
  return Object.prototype.hasOwnProperty.call(query, 'stream');
}
