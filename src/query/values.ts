// Parsers of the typed values of the search language. Each returns the value or a message that
// says what is wrong and what form is expected; none throws.

import type { Pattern, TimestampPrecision, TypedValue } from './checked.js';

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(message: string): Parsed<T> => ({ ok: false, message });

// ---------------------------------------------------------------------------------------------
// Patterns

/**
 * A wildcard pattern from a value's text: `*` matches any run, `\*` is a literal star, `\=` a
 * literal `=` and `\\` a backslash; any other backslash is itself. Segments are lower-cased.
 */
export function parsePattern(text: string): Pattern {
  if (!text.includes('*') && !text.includes('\\')) return { segments: [text.toLowerCase()], text };
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const n = text[i + 1];
      if (n === '*' || n === '=' || n === '\\') {
        current += n;
        i++;
        continue;
      }
      current += c;
    } else if (c === '*') {
      segments.push(current.toLowerCase());
      current = '';
    } else {
      current += c;
    }
  }
  segments.push(current.toLowerCase());
  return { segments, text };
}

/** Offset of the first `=` not escaped by a backslash, or -1. */
export function firstUnescapedEquals(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 61 /* = */) return i;
  }
  return -1;
}

/** Whether a pattern matches a whole value (case-insensitively). */
export function patternMatches(pattern: Pattern, value: string): boolean {
  const v = value.toLowerCase();
  const segs = pattern.segments;
  if (segs.length === 1) return v === segs[0];
  const first = segs[0]!;
  const last = segs[segs.length - 1]!;
  if (!v.startsWith(first)) return false;
  let pos = first.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const at = v.indexOf(segs[i]!, pos);
    if (at < 0) return false;
    pos = at + segs[i]!.length;
  }
  return v.length - pos >= last.length && v.endsWith(last);
}

// ---------------------------------------------------------------------------------------------
// Durations

const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const SIMPLE_PART = /(\d+(?:\.\d+)?|\.\d+)(ms|d|h|m|s)/iy;
const ISO_DURATION =
  /^P(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i;
const num = (s: string | undefined): number => (s === undefined ? 0 : Number(s.replace(',', '.')));

const DURATION_FORMS = 'a duration such as 1h30m, 250ms, 1.5h or PT1H30M';

/** Milliseconds of `1h30m`, `250ms`, `PT1H30M`, `P1DT2H`, `PT0.5S` (rounded to the millisecond). */
export function parseDuration(text: string): Parsed<number> {
  if (text.length === 0) return fail(`Expected ${DURATION_FORMS}`);
  if (text[0] === 'P' || text[0] === 'p') {
    const m = ISO_DURATION.exec(text);
    if (m === null || text.length === 1 || /t$/i.test(text)) {
      if (/^P[^T]*[YM]/i.test(text)) return fail(`'${text}': years and months have no fixed length; write days instead (P30D)`);
      return fail(`'${text}' is not an ISO 8601 duration; expected ${DURATION_FORMS}`);
    }
    const ms = num(m[1]) * 7 * UNIT_MS['d']! + num(m[2]) * UNIT_MS['d']! + num(m[3]) * UNIT_MS['h']! + num(m[4]) * UNIT_MS['m']! + num(m[5]) * 1000;
    return ok(Math.round(ms));
  }
  let total = 0;
  let pos = 0;
  while (pos < text.length) {
    SIMPLE_PART.lastIndex = pos;
    const m = SIMPLE_PART.exec(text);
    if (m === null) {
      if (/^\d+(\.\d+)?$/.test(text)) return fail(`'${text}' has no unit: write ${text}ms, ${text}s, ${text}m, ${text}h or ${text}d`);
      return fail(`'${text}' is not a duration; expected ${DURATION_FORMS} (units d, h, m, s, ms)`);
    }
    total += Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]!;
    pos = SIMPLE_PART.lastIndex;
  }
  return ok(Math.round(total));
}

// ---------------------------------------------------------------------------------------------
// Timestamps

// Up to 9 fraction digits: Python's isoformat() writes 6, Java's Instant and Go up to 9. Instants
// are kept in milliseconds, so digits past the third are cut off (the millisecond that holds the instant).
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:\d{2})?$/i;
const SPAN_MS: Readonly<Record<TimestampPrecision, number>> = { day: 86_400_000, minute: 60_000, second: 1000, millisecond: 1 };
const TIMESTAMP_FORMS = 'YYYY-MM-DD, YYYY-MM-DDTHH:MM, YYYY-MM-DDTHH:MM:SS or YYYY-MM-DDTHH:MM:SS.SSS (1 to 9 fraction digits; optional Z or ±HH:MM), or a relative time such as -7d';

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** An absolute timestamp or, with a leading `-`, now minus a duration. */
export function parseTimestamp(text: string, now: number): Parsed<TypedValue & { type: 'timestamp' }> {
  if (text.startsWith('-')) {
    const d = parseDuration(text.slice(1));
    if (!d.ok) return fail(`'${text}' is not a relative time: ${d.message}`);
    return ok({ type: 'timestamp', instant: now - d.value, spanMs: 1, precision: 'millisecond', relativeMs: d.value, text });
  }
  const m = TIMESTAMP.exec(text);
  if (m === null) return fail(`'${text}' is not a timestamp; expected ${TIMESTAMP_FORMS}`);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [num(m[4]), num(m[5]), num(m[6])];
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12) return fail(`'${text}': month ${m[2]} does not exist (01-12)`);
  if (day < 1 || day > daysInMonth(year, month)) return fail(`'${text}': day ${m[3]} does not exist in that month`);
  if (hour > 23) return fail(`'${text}': hour ${m[4]} does not exist (00-23)`);
  if (minute > 59) return fail(`'${text}': minute ${m[5]} does not exist (00-59)`);
  if (second > 59) return fail(`'${text}': second ${m[6]} does not exist (00-59)`);
  let offsetMs = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return fail(`'${text}': offset ${zone} does not exist`);
    offsetMs = (zone[0] === '-' ? -1 : 1) * (oh * 3_600_000 + om * 60_000);
  }
  const precision: TimestampPrecision =
    m[4] === undefined ? 'day' : m[6] === undefined ? 'minute' : m[7] === undefined ? 'second' : 'millisecond';
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC maps years 0-99 to 1900-1999; set the year explicitly.
  const instant = year < 100 ? new Date(utc).setUTCFullYear(year) - offsetMs : utc - offsetMs;
  return ok({ type: 'timestamp', instant, spanMs: SPAN_MS[precision], precision, text });
}

// ---------------------------------------------------------------------------------------------
// Numbers and storage sizes

const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;

export function parseNumber(text: string): Parsed<number> {
  if (!NUMBER.test(text)) return fail(`'${text}' is not a number; expected an integer or a decimal such as 4, -2 or 1.5`);
  return ok(Number(text));
}

const SIZE = /^(\d+(?:\.\d+)?|\.\d+)(?:([kmgt])(i)?)?(b)?$/i;
const SIZE_POWER: Readonly<Record<string, number>> = { k: 1, m: 2, g: 3, t: 4 };

/** Bytes of `2gib`, `512MB`, `1.5g`, `4096` (k m g t: powers of 1000; ki mi gi ti: powers of 1024). */
export function parseStorageSize(text: string): Parsed<number> {
  const m = SIZE.exec(text);
  if (m === null) {
    return fail(`'${text}' is not a storage size; expected a number of bytes with an optional unit k, m, g, t (1000) or ki, mi, gi, ti (1024), such as 512mb, 2gib or 4096`);
  }
  const power = m[2] === undefined ? 0 : SIZE_POWER[m[2].toLowerCase()]!;
  const base = m[3] === undefined ? 1000 : 1024;
  return ok(Math.round(Number(m[1]) * base ** power));
}

export function parseBoolean(text: string): boolean | undefined {
  const t = text.toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : undefined;
}
