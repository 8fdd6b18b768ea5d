// Requests generated from the committed OpenAPI document (docs/openapi.json): for every
// operation, hostile values for every parameter and malformed bodies of every content type it
// takes, checked against the rules every answer follows (docs/operations.md, "Reliability").
// Used by openapi-fuzz.test.ts (short) and by `npm run soak` (FUZZ_RUNS large).

import { readFileSync } from 'node:fs';
import fc from 'fast-check';

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
}

export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly Parameter[];
  /** Content types the document declares for the body; undefined when it declares no body. */
  readonly bodyTypes: readonly string[] | undefined;
}

interface OpenApiDocument {
  readonly paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, unknown> } }>>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

export function loadOperations(file = new URL('../../docs/openapi.json', import.meta.url)): Operation[] {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).map((p) => ({ name: p.name, in: p.in })),
        bodyTypes: op.requestBody ? Object.keys(op.requestBody.content) : undefined,
      });
    }
  }
  return out;
}

/** A value as it goes on the wire: already percent-encoded for a URL (`raw`), or plain text. */
export interface WireValue {
  readonly text: string;
  /** Set when `text` is already encoded (a lone surrogate has no encodeURIComponent form). */
  readonly raw?: boolean;
}

export const HOSTILE: readonly string[] = [
  '', ' ', '0', '-1', '-0', '1.5', '1e400', '-1e400', 'Infinity', '-Infinity', 'NaN', '9'.repeat(400), '0x10', '1_000',
  String(Number.MAX_SAFE_INTEGER + 2), String(2 ** 64), '\u0000', 'a\u0000b', 'é', '😀', '\u202e', '\ufeff', '\uffff',
  'true', 'false', 'null', '[]', '{}', '[1,2]', '{"a":1}', '../../etc/passwd', '%', '%00', '%ZZ', "'; drop table builds; --", '\\', '"', '<script>',
  'now', '0', '1970-01-01', '2024-13-45', '-5d', 'PT1H', 'b000000000001', 'a,,b', 'attributes', 'BuildStarted,BuildFinished', 'javascript:alert(1)',
  'http://[::1', 'x'.repeat(4000),
];

export const hostileValue: fc.Arbitrary<WireValue> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE).map((text) => ({ text })) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((text) => ({ text })) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((text) => ({ text })) },
  { weight: 1, arbitrary: fc.double().map((n) => ({ text: String(n) })) },
  { weight: 1, arbitrary: fc.bigInt().map((n) => ({ text: String(n) })) },
  // A lone surrogate, as a client that encodes it anyway sends it.
  { weight: 1, arbitrary: fc.constantFrom('%ED%A0%80', '%C0%80', '%FF', 'a%00').map((text) => ({ text, raw: true })) },
);

export function encodeValue(v: WireValue): string {
  return v.raw ? v.text : encodeURIComponent(v.text);
}

/** Header values can carry neither line breaks nor NUL nor (for fetch) anything above Latin-1. */
export function headerSafe(text: string): string {
  return text.replace(/[\r\n\0]/g, ' ').replace(/[^\x20-\xff]/g, '?');
}

export type Body = { readonly type: string | undefined; readonly body: string; readonly oversized?: boolean };

const BODY_TYPES = ['application/json', 'application/x-ndjson', 'application/x-www-form-urlencoded', 'multipart/form-data'];

function multipart(boundary: string, parts: readonly (readonly [string, string])[], closed: boolean): string {
  const body = parts.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('');
  return closed ? `${body}--${boundary}--\r\n` : body;
}

const FIELDS = ['sha256', 'repositoryUrl', 'buildScan.ids', 'buildScan.queries', 'key', 'secret', 'nodeAddress', 'status', 'events', 'buildId'];

/** Malformed and odd bodies of one content type, and bodies over `limitBytes`. */
export function bodyOf(type: string, limitBytes: number): fc.Arbitrary<Body> {
  const text = fc.string({ unit: 'grapheme', maxLength: 60 });
  const json = fc.jsonValue({ maxDepth: 4 });
  const fieldValue = fc.oneof(hostileValue.map((v) => v.text), json.map((v) => JSON.stringify(v)));
  const oversized = fc.constant<Body>({ type, body: 'x'.repeat(limitBytes + 1024), oversized: true });
  switch (type) {
    case 'application/json':
      return fc.oneof(
        json.map((v) => ({ type, body: JSON.stringify(v) })),
        fc.dictionary(fc.constantFrom(...FIELDS), json).map((v) => ({ type, body: JSON.stringify(v) })),
        fc.constantFrom('', '{', '{"a":', '[1,', 'nul', '{"key":"\u0000"}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', '1e400').map((body) => ({ type, body })),
        text.map((body) => ({ type, body })),
        oversized,
      );
    case 'application/x-ndjson':
      return fc.oneof(
        fc.array(fc.oneof(json.map((v) => JSON.stringify(v)), text.map((t) => t.replace(/\n/g, ' '))), { maxLength: 4 }).map((lines) => ({ type, body: lines.join('\n') })),
        fc.constantFrom('', '\n\n', '{"buildId":', '{"buildId":"b000000000001","toolType":"native","events":[{}]}\n{').map((body) => ({ type, body })),
        oversized,
      );
    case 'application/x-www-form-urlencoded':
      return fc.oneof(
        fc.array(fc.tuple(fc.constantFrom(...FIELDS), fieldValue), { maxLength: 5 }).map((pairs) => ({ type, body: pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&') })),
        fc.constantFrom('', '=', '&&&', '%', '%ZZ=1', 'a=%00', 'sha256=%ED%A0%80').map((body) => ({ type, body })),
        oversized,
      );
    case 'multipart/form-data':
      return fc.oneof(
        fc.tuple(fc.array(fc.tuple(fc.constantFrom(...FIELDS), fieldValue.map((v) => v.replace(/\r\n/g, ' '))), { maxLength: 4 }), fc.boolean()).map(([parts, closed]) => ({
          type: `${type}; boundary=XyZ`,
          body: multipart('XyZ', parts, closed),
        })),
        // No boundary parameter, a boundary that never appears, a part cut short.
        fc.constantFrom(
          { type, body: multipart('XyZ', [['sha256', 'a']], true) },
          { type: `${type}; boundary=Other`, body: multipart('XyZ', [['sha256', 'a']], true) },
          { type: `${type}; boundary=XyZ`, body: '--XyZ\r\nContent-Disposition: form-data; name="sha256"\r\n\r\nab' },
          { type: `${type}; boundary=XyZ`, body: '--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--\r\n' },
          { type: `${type}; boundary=`, body: '' },
        ),
        fc.constant<Body>({ type: `${type}; boundary=XyZ`, body: multipart('XyZ', [['sha256', 'x'.repeat(limitBytes + 1024)]], true), oversized: true }),
      );
    default:
      return fc.oneof(text.map((body) => ({ type, body })), oversized);
  }
}

/** Bodies for an operation: of the types it declares, or of every common type when it declares none. */
export function bodiesFor(op: Operation, limitBytes: number): fc.Arbitrary<Body | undefined> {
  if (op.method === 'GET' || op.method === 'DELETE') return fc.constant(undefined);
  const types = op.bodyTypes ?? BODY_TYPES;
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom(...BODY_TYPES, 'text/plain', 'application/octet-stream').chain((t) => bodyOf(t, limitBytes)) },
    { weight: 4, arbitrary: fc.constantFrom(...types).chain((t) => bodyOf(t, limitBytes)) },
  );
}

export interface Tally {
  requests: number;
  serverErrors: number;
  hangs: number;
  /** The connection was dropped while the client still sent (a refusal before the body was read). */
  resets: number;
  byOperation: Record<string, { requests: number; serverErrors: number; hangs: number; resets: number }>;
}

export function newTally(): Tally {
  return { requests: 0, serverErrors: 0, hangs: 0, resets: 0, byOperation: {} };
}

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly why: string };

/**
 * Sends one request and checks the answer: no 5xx, an answer within `timeoutMs`, every 4xx a
 * problem document (type, title, status, detail), every 2xx with a JSON type valid JSON. An event
 * stream is checked by its headers and then dropped.
 */
export async function probe(url: string, init: { method: string; headers: Record<string, string>; body?: string }, tally: Tally, operation: string, timeoutMs: number): Promise<Verdict> {
  const counts = (tally.byOperation[operation] ??= { requests: 0, serverErrors: 0, hangs: 0, resets: 0 });
  tally.requests++;
  counts.requests++;
  const signal = AbortSignal.timeout(timeoutMs);
  let r: Response;
  let text: string;
  try {
    r = await fetch(url, { ...init, signal, redirect: 'manual' });
    const type = r.headers.get('content-type') ?? '';
    if (r.status === 200 && type.startsWith('text/event-stream')) {
      await r.body?.cancel();
      return { ok: true };
    }
    text = await r.text();
  } catch (e) {
    if (signal.aborted) {
      tally.hangs++;
      counts.hangs++;
      return { ok: false, why: `no answer within ${timeoutMs} ms` };
    }
    // fetch fails when the server answers and closes before the body is sent (item 8 of the
    // reliability issue); counted, and not a 5xx or a hang.
    tally.resets++;
    counts.resets++;
    return { ok: true };
  }
  if (r.status >= 500) {
    tally.serverErrors++;
    counts.serverErrors++;
    return { ok: false, why: `${r.status}: ${text.slice(0, 500)}` };
  }
  const type = r.headers.get('content-type') ?? '';
  if (r.status >= 400) {
    if (!type.startsWith('application/problem+json')) return { ok: false, why: `${r.status} with content type ${type}: ${text.slice(0, 300)}` };
    let p: Record<string, unknown>;
    try {
      p = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { ok: false, why: `${r.status}: the problem document is not JSON: ${text.slice(0, 300)}` };
    }
    for (const [field, kind] of [['type', 'string'], ['title', 'string'], ['status', 'number'], ['detail', 'string']] as const) {
      if (typeof p[field] !== kind) return { ok: false, why: `${r.status}: problem document without a ${kind} ${field}: ${text.slice(0, 300)}` };
    }
    if (p.status !== r.status) return { ok: false, why: `problem status ${String(p.status)} on a ${r.status}` };
    return { ok: true };
  }
  if (r.status >= 200 && r.status < 300 && /[/+]json\b/.test(type)) {
    try {
      JSON.parse(text);
    } catch {
      return { ok: false, why: `${r.status} ${type} that is not JSON: ${text.slice(0, 300)}` };
    }
  }
  return { ok: true };
}

export function formatTally(title: string, t: Tally): string {
  const rows = Object.entries(t.byOperation).map(([op, c]) => `  ${op.padEnd(78)} ${String(c.requests).padStart(6)} ${String(c.serverErrors).padStart(4)} ${String(c.hangs).padStart(5)} ${String(c.resets).padStart(6)}`);
  return [`${title}: ${t.requests} requests, ${t.serverErrors} 5xx, ${t.hangs} hangs, ${t.resets} connections reset while sending`, `  ${'operation'.padEnd(78)} ${'reqs'.padStart(6)} ${'5xx'.padStart(4)} ${'hangs'.padStart(5)} ${'resets'.padStart(6)}`, ...rows].join('\n');
}
