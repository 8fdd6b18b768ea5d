// Validation of one NDJSON ingest line against the event model (docs/store.md): the result is a
// typed record or the first fault with a JSON path such as `$.events[3].timestamp`.

import { isToolType, type ToolType } from '../query/catalog.js';
import type { BuildEvent } from './types.js';

export const BUILD_ID_PATTERN = /^[0-9a-z]{13}$/;

export interface IngestRecord {
  readonly buildId: string | undefined;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly events: readonly BuildEvent[];
}

export type Validation =
  | { readonly ok: true; readonly record: IngestRecord }
  | { readonly ok: false; readonly path: string; readonly error: string; readonly buildId?: string };

const fail = (path: string, error: string, buildId?: string): Validation =>
  buildId === undefined ? { ok: false, path, error } : { ok: false, path, error, buildId };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

export function parseLine(text: string): Validation {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail('$', `Invalid JSON: ${(e as Error).message}`);
  }
  const validation = validateRecord(value);
  // JSON can carry NUL only as the escape \u0000; only then is the parsed value searched for it.
  if (validation.ok && text.includes('\\u0000')) {
    const at = nulPath(value, '$');
    if (at !== undefined) return fail(at, 'NUL characters (U+0000) are not allowed: PostgreSQL cannot store them in text', validation.record.buildId);
  }
  return validation;
}

/** JSON path of the first string or member name holding NUL, if any. */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = nulPath(value[i], `${path}[${i}]`);
      if (at !== undefined) return at;
    }
    return undefined;
  }
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const member = /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
      if (k.includes('\0')) return member;
      const at = nulPath(v, member);
      if (at !== undefined) return at;
    }
  }
  return undefined;
}

export function validateRecord(value: unknown): Validation {
  if (!isObject(value)) return fail('$', `Expected a JSON object (one build per line), got ${describe(value)}`);
  const { buildId, toolType, toolVersion, agentVersion, events } = value;
  if (buildId !== undefined && buildId !== null) {
    if (typeof buildId !== 'string') return fail('$.buildId', `Expected a string of 13 characters [0-9a-z], got ${describe(buildId)}`);
    if (!BUILD_ID_PATTERN.test(buildId)) return fail('$.buildId', `Expected 13 characters of [0-9a-z], got ${JSON.stringify(buildId)}`);
  }
  const id = typeof buildId === 'string' ? buildId : undefined;
  if (typeof toolType !== 'string') return fail('$.toolType', `Expected a string, got ${describe(toolType)}`, id);
  if (!isToolType(toolType)) {
    return fail('$.toolType', `Unknown tool type ${JSON.stringify(toolType)}; expected native, jvmbuild, targetbuild, scalabuild, jsbuild or pybuild`, id);
  }
  if (typeof toolVersion !== 'string') return fail('$.toolVersion', `Expected a string, got ${describe(toolVersion)}`, id);
  if (typeof agentVersion !== 'string') return fail('$.agentVersion', `Expected a string, got ${describe(agentVersion)}`, id);
  if (!Array.isArray(events)) return fail('$.events', `Expected an array of events, got ${describe(events)}`, id);
  for (let i = 0; i < events.length; i++) {
    const e: unknown = events[i];
    const at = `$.events[${i}]`;
    if (!isObject(e)) return fail(at, `Expected an event object, got ${describe(e)}`, id);
    const { timestamp, type, data } = e;
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
      return fail(`${at}.timestamp`, `Expected epoch milliseconds (an integer), got ${typeof timestamp === 'number' ? String(timestamp) : describe(timestamp)}`, id);
    }
    if (!isObject(type)) return fail(`${at}.type`, `Expected {majorVersion, minorVersion, eventType}, got ${describe(type)}`, id);
    const { majorVersion, minorVersion, eventType } = type;
    if (typeof majorVersion !== 'number' || !Number.isInteger(majorVersion) || majorVersion < 0) {
      return fail(`${at}.type.majorVersion`, `Expected a non-negative integer, got ${describe(majorVersion)}`, id);
    }
    if (typeof minorVersion !== 'number' || !Number.isInteger(minorVersion) || minorVersion < 0) {
      return fail(`${at}.type.minorVersion`, `Expected a non-negative integer, got ${describe(minorVersion)}`, id);
    }
    if (typeof eventType !== 'string' || eventType.length === 0) {
      return fail(`${at}.type.eventType`, `Expected a non-empty string, got ${describe(eventType)}`, id);
    }
    if (!isObject(data)) return fail(`${at}.data`, `Expected an object, got ${describe(data)}`, id);
  }
  // The parsed events are used as they are (no copy: ingest is allocation-bound); members other
  // than timestamp, type and data are not stored (event-codec.ts writes only those).
  return { ok: true, record: { buildId: id, toolType, toolVersion, agentVersion, events: events as BuildEvent[] } };
}
