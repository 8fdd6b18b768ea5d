// Validation of one NDJSON ingest line against its JSON Schema (schema/ingest-line.schema.json,
// the event model's ingest format, which the agents and the OpenAPI document share): the result
// is a typed record or the first fault with a JSON path such as `$.events[3].timestamp` and what
// was expected there (the schema's `description` of the place) and found instead.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ToolType } from '../../query/catalog.js';
import type { BuildEvent } from '../types.js';

/** The schema file: three levels below the package root from src/store/ingest/ and dist/store/ingest/ alike. */
export const INGEST_LINE_SCHEMA_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'schema', 'ingest-line.schema.json');

export const INGEST_LINE_SCHEMA = JSON.parse(readFileSync(INGEST_LINE_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;

export { BUILD_ID_PATTERN } from './build-id.js';

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

// Compiled once, when first used: ajv turns the schema into code, which costs a few milliseconds;
// then each line costs about what the checks written by hand did (docs/store.md). allErrors off:
// the first fault is all a rejected line reports, and ajv stops there.
let validator: ValidateFunction | undefined;

function validateLine(): ValidateFunction {
  validator ??= new Ajv2020({ allErrors: false, verbose: true, strict: true, strictTypes: false }).compile(INGEST_LINE_SCHEMA);
  return validator;
}

export function validateRecord(value: unknown): Validation {
  const validate = validateLine();
  if (validate(value)) {
    const record = value as unknown as IngestRecord & { buildId?: string | null };
    // The parsed events are used as they are (no copy: ingest is allocation-bound); members other
    // than timestamp, type and data are not stored (event-codec.ts writes only those).
    return { ok: true, record: { buildId: record.buildId ?? undefined, toolType: record.toolType, toolVersion: record.toolVersion, agentVersion: record.agentVersion, events: record.events } };
  }
  const { path, error } = faultOf(validate.errors![0]!, value);
  // The line's build ID goes with the fault, unless the ID itself is the fault.
  const buildId = isObject(value) && typeof value['buildId'] === 'string' && path !== '$.buildId' ? value['buildId'] : undefined;
  return fail(path, error, buildId);
}

/** A JSON path (`$.events[3].type`) from a JSON pointer (`/events/3/type`). */
function jsonPath(pointer: string): string {
  let out = '$';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`;
  }
  return out;
}

/** What was found: a string or number as it is, anything else by its kind. */
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v) : typeof v === 'number' ? String(v) : describe(v));

/** The path and wording of ajv's first error: `Expected <the schema's description of the place>, got <what is there>`. */
function faultOf(e: ErrorObject, root: unknown): { path: string; error: string } {
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const property = (e.parentSchema as { properties?: Record<string, { description?: string }> } | undefined)?.properties?.[missing];
    return { path: jsonPath(`${e.instancePath}/${missing}`), error: `Expected ${property?.description ?? 'a value'}, got undefined` };
  }
  const path = jsonPath(e.instancePath);
  const expected = (e.parentSchema as { description?: string } | undefined)?.description ?? e.message ?? 'something else';
  if (path === '$') return { path, error: `Expected a JSON object (one build per line), got ${describe(root)}` };
  return { path, error: `Expected ${expected}, got ${shown(e.data)}` };
}
