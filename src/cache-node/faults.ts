// ajv validates; this file words each fault for a person: where it is, what is allowed, what was
// found, and (for unknown properties) which allowed name was probably meant.

import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { cacheNodeConfigSchema } from './schema.js';
// The same edit distance as the search language's "did you mean" (adjacent transpositions count
// as one edit), so both suggest alike.
import { editDistance } from '../query/suggest.js';

export interface Fault {
  /** Dotted path in the file, e.g. `cache.targetSize.size`; `(root)` for the whole file. */
  readonly path: string;
  readonly message: string;
  readonly segments?: readonly (string | number)[];
  readonly line?: number;
  readonly column?: number;
}

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on .default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => Ajv2020;

const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictTypes: false });
addFormats(ajv);
const validate = ajv.compile(cacheNodeConfigSchema);

/** What each setting means, for messages about a missing or misspelt one. */
const UNITS: Record<string, string> = {
  freeSpaceBufferSize: ' (MiB)',
  maxArtifactSize: ' (MiB)',
  size: ' (MiB)',
  maxEntryAgeInHours: ' (hours)',
};

const HOW_TO_FILL: Record<string, string> = {
  version: 'set "version": 4',
  type: 'say which kind',
  size: 'give the total cache size in MiB',
  key: 'the node key shown by `buildscope cache-node credentials NAME` on the server',
  secret: 'the node secret shown by `buildscope cache-node credentials NAME` on the server',
  nodeAddress: 'the URI at which the server and users reach this node',
  serverAddress: 'the URI of the Buildscope server',
  level: 'one of "read", "readwrite"',
  password: 'a hashed secret from `buildscope cache-node hash-secret`',
  username: 'the username for the UI',
};

export function schemaFaults(value: unknown): Fault[] {
  if (validate(value)) return [];
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
  // A wrong type makes the sibling keywords at the same place meaningless: keep the type fault.
  const typed = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const seen = new Set<string>();
  const faults: Fault[] = [];
  for (const e of errors) {
    if (e.keyword !== 'type' && typed.has(e.instancePath)) continue;
    const f = describe(e);
    const id = `${f.path}\u0000${f.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    faults.push(f);
  }
  return faults;
}

function segmentsOf(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function pathOf(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return '(root)';
  return segments
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : /^[A-Za-z_$][\w$-]*$/.test(s) ? `${i === 0 ? '' : '.'}${s}` : `[${JSON.stringify(s)}]`))
    .join('');
}

function found(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  return String(v);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function allowedProperties(e: ErrorObject): string[] {
  const props = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return Object.keys(props);
}

function describe(e: ErrorObject): Fault {
  const segments = segmentsOf(e.instancePath);
  const last = segments[segments.length - 1];
  const key = typeof last === 'string' ? last : '';
  const data = e.data;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const missing = String(p['missingProperty']);
      const s = [...segments, missing];
      const hint = HOW_TO_FILL[missing];
      return { path: pathOf(s), segments: s, message: `is required${hint ? `: ${hint}` : ''}` };
    }
    case 'additionalProperties': {
      const extra = String(p['additionalProperty']);
      const s = [...segments, extra];
      const allowed = allowedProperties(e);
      const near = allowed.map((a) => ({ a, d: editDistance(extra, a) })).sort((x, y) => x.d - y.d)[0];
      const suggestion = near && near.d <= Math.max(2, Math.floor(extra.length / 3)) ? ` (did you mean "${near.a}"?)` : '';
      const where = allowed.length > 0 ? `; allowed here: ${allowed.join(', ')}` : '';
      return { path: pathOf(s), segments: s, message: `unknown property${suggestion}${where}` };
    }
    case 'minProperties':
      return { path: pathOf(segments), segments, message: 'must set at least one property; the smallest valid file is {"version": 4}' };
    case 'const':
      return { path: pathOf(segments), segments, message: `must be ${JSON.stringify(p['allowedValue'])}, found ${found(data)}${key === 'version' ? ' (this node reads version 4 of the file format)' : ''}` };
    case 'enum':
      return {
        path: pathOf(segments),
        segments,
        message: `must be one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, found ${found(data)}`,
      };
    case 'type': {
      const expected = Array.isArray(p['type']) ? (p['type'] as string[]).join(' or ') : String(p['type']);
      return { path: pathOf(segments), segments, message: `must be ${expected === 'object' ? 'an object' : expected === 'integer' ? 'an integer' : expected}${UNITS[key] ?? ''}, found ${typeName(data)} ${found(data)}`.replace(/found (\w+) \1$/, 'found $1') };
    }
    case 'minimum':
      return { path: pathOf(segments), segments, message: `must be >= ${String(p['limit'])}${UNITS[key] ?? ''}, found ${found(data)}` };
    case 'pattern':
      return {
        path: pathOf(segments),
        segments,
        message: 'is not a hashed secret string (43 base64 characters, "=", ":", then base64); never write a plain password here, create the value with `buildscope cache-node hash-secret`',
      };
    case 'format':
      return { path: pathOf(segments), segments, message: `must be an absolute URI such as http://host:5071/, found ${found(data)}` };
    default:
      return { path: pathOf(segments), segments, message: e.message ?? 'is not valid' };
  }
}

/** One line per fault: `path: message (line L, column C)`. */
export function formatFaults(faults: readonly Fault[]): string {
  return faults.map((f) => `${f.path}: ${f.message}${f.line !== undefined ? ` (line ${f.line}, column ${f.column})` : ''}`).join('\n');
}
