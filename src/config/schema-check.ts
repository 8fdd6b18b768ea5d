// The one way a configuration file is checked: ajv validates against a JSON Schema, this module
// words each fault for a person (where it is, what is allowed, what was found, and for an unknown
// setting which allowed name was probably meant) and finds its line and column in the YAML source.
// The server's file (src/config.ts) and the cache node's file (src/cache-node/config.ts) both use it.

import { Ajv2020, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isNode, LineCounter, parseDocument, visit } from 'yaml';
// The search language's "did you mean" (edit distance with adjacent transpositions, within a third
// of the typed name), so every suggestion the product makes is computed alike.
import { closest } from '../query/suggest.js';

export interface Fault {
  /** Dotted path in the file, e.g. `cache.targetSize.size`; `(root)` for the whole file. */
  readonly path: string;
  readonly message: string;
  readonly segments?: readonly (string | number)[];
  readonly line?: number;
  readonly column?: number;
}

/** `path: message (line L, column C)`. */
export function formatFault(f: Fault): string {
  return `${f.path}: ${f.message}${f.line !== undefined ? ` (line ${f.line}, column ${f.column})` : ''}`;
}

/** One line per fault. */
export function formatFaults(faults: readonly Fault[]): string {
  return faults.map(formatFault).join('\n');
}

/**
 * A configuration that cannot be used. One type for every section of every file; its message is
 * one line (faults joined by `; `), which the command line prints as it is, without a stack trace.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly faults: readonly Fault[];
  constructor(faults: string | readonly Fault[], where?: string) {
    const list = typeof faults === 'string' ? [] : faults;
    const text = typeof faults === 'string' ? faults : faults.map(formatFault).join('; ');
    super(where !== undefined ? `${where}: ${text}` : text);
    this.faults = list;
  }
}

/** Throws one ConfigError for all the faults, if there are any. */
export function throwFaults(faults: readonly Fault[], where?: string): void {
  if (faults.length > 0) throw new ConfigError(faults, where);
}

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on .default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => Ajv2020;

/**
 * The one ajv instance. `useDefaults` fills in the `default` of every absent setting, so a
 * schema's defaults are the defaults (validate a copy: the value is changed in place).
 */
let ajv: Ajv2020 | undefined;

function theAjv(): Ajv2020 {
  if (ajv === undefined) {
    ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictTypes: false, useDefaults: true });
    addFormats(ajv);
  }
  return ajv;
}

/** A compiled schema: true when the value is valid, else `errors` says why. */
export interface Validator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * A schema's validator, compiled when first used: ajv generates code for each schema, which costs
 * about as much as loading the database drivers, and most processes check only a few sections.
 */
export function compileSchema(schema: AnySchema): Validator {
  let compiled: ValidateFunction | undefined;
  const validator: Validator = (value: unknown) => {
    compiled ??= theAjv().compile(schema);
    const ok = compiled(value);
    validator.errors = compiled.errors ?? null;
    return ok;
  };
  return validator;
}

/** The `default` of each setting of a flat section's schema, without compiling it. */
export function defaultsOf(schema: { readonly properties: Readonly<Record<string, { readonly default?: unknown }>> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(schema.properties)) if (p.default !== undefined) out[k] = p.default;
  return out;
}

/** How a family of settings is worded in messages; every entry is optional. */
export interface Wording {
  /** Unit of a setting by name, e.g. ` (MiB)`, appended to type and range faults. */
  readonly units?: Readonly<Record<string, string>>;
  /** How to fill in a required setting, by name. */
  readonly howToFill?: Readonly<Record<string, string>>;
  /** Message for a value that does not match a `pattern`. */
  readonly pattern?: (segments: readonly (string | number)[], data: unknown) => string | undefined;
  /** Message for a value that does not match a `format`. */
  readonly format?: (segments: readonly (string | number)[], data: unknown) => string | undefined;
  /** Message for an object with too few properties. */
  readonly minProperties?: string;
  /** Appended to a `const` fault of the named setting. */
  readonly constNote?: Readonly<Record<string, string>>;
}

/** The faults of `value` against a compiled schema; [] when it is valid. */
export function schemaFaults(validate: Validator, value: unknown, wording: Wording = {}): Fault[] {
  if (validate(value)) return [];
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
  // A wrong type makes the sibling keywords at the same place meaningless: keep the type fault.
  const typed = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  // An empty value fails its pattern too: keep the plainer "must not be empty".
  const empty = new Set(errors.filter((e) => e.keyword === 'minLength').map((e) => e.instancePath));
  const seen = new Set<string>();
  const faults: Fault[] = [];
  for (const e of errors) {
    if (e.keyword !== 'type' && typed.has(e.instancePath)) continue;
    if (e.keyword === 'pattern' && empty.has(e.instancePath)) continue;
    const f = describe(e, wording);
    const id = `${f.path}\u0000${f.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    faults.push(f);
  }
  return faults;
}

export function dotted(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return '(root)';
  return segments
    .map((s, i) => (typeof s === 'number' || /^(0|[1-9]\d*)$/.test(s) ? `[${s}]` : /^[A-Za-z_$][\w$-]*$/.test(s) ? `${i === 0 ? '' : '.'}${s}` : `[${JSON.stringify(s)}]`))
    .join('');
}

/** A fault at `segments` (for checks a schema cannot express). */
export function faultAt(segments: readonly (string | number)[], message: string): Fault {
  return { path: dotted(segments), segments, message };
}

function segmentsOf(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
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

/** The allowed name closest to `typed`, if it is close enough to be what was meant. */
export function didYouMean(typed: string, allowed: readonly string[]): string | undefined {
  // A name cut short (`maxAge` for `maxAgeDays`) is far in edits but plainly meant.
  const lower = typed.toLowerCase();
  const extended = typed.length >= 4 ? allowed.filter((a) => a.toLowerCase().startsWith(lower)) : [];
  if (extended.length === 1) return extended[0];
  return closest(typed, allowed);
}

function describe(e: ErrorObject, w: Wording): Fault {
  const segments = segmentsOf(e.instancePath);
  const last = segments[segments.length - 1];
  const key = typeof last === 'string' ? last : '';
  const unit = w.units?.[key] ?? '';
  const data = e.data;
  const p = e.params as Record<string, unknown>;
  const at = (s: readonly (string | number)[], message: string): Fault => ({ path: dotted(s), segments: s, message });
  switch (e.keyword) {
    case 'required': {
      const missing = String(p['missingProperty']);
      const hint = w.howToFill?.[missing];
      return at([...segments, missing], `is required${hint ? `: ${hint}` : ''}`);
    }
    case 'additionalProperties': {
      const extra = String(p['additionalProperty']);
      const allowed = allowedProperties(e);
      const near = didYouMean(extra, allowed);
      const suggestion = near !== undefined ? ` (did you mean "${near}"?)` : '';
      const where = allowed.length > 0 ? `; allowed here: ${allowed.join(', ')}` : '';
      return at([...segments, extra], `unknown property${suggestion}${where}`);
    }
    case 'minProperties':
      return at(segments, w.minProperties ?? `must set at least ${String(p['limit'])} propert${p['limit'] === 1 ? 'y' : 'ies'}`);
    case 'const':
      return at(segments, `must be ${JSON.stringify(p['allowedValue'])}, found ${found(data)}${w.constNote?.[key] ?? ''}`);
    case 'enum':
      return at(segments, `must be one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, found ${found(data)}`);
    case 'type': {
      const expected = Array.isArray(p['type']) ? (p['type'] as string[]).join(' or ') : String(p['type']);
      const article = expected === 'object' ? 'an object' : expected === 'integer' ? 'an integer' : expected === 'array' ? 'a list' : expected;
      // "found array", "found null", "found string \"x\"": the kind, then the value when it is short.
      const value = data === null || typeof data === 'object' ? '' : ` ${found(data)}`;
      return at(segments, `must be ${article}${unit}, found ${typeName(data)}${value}`.replace(/found (\w+) \1$/, 'found $1'));
    }
    case 'minimum':
      return at(segments, `must be >= ${String(p['limit'])}${unit}, found ${found(data)}`);
    case 'maximum':
      return at(segments, `must be <= ${String(p['limit'])}${unit}, found ${found(data)}`);
    case 'exclusiveMinimum':
      return at(segments, `must be > ${String(p['limit'])}${unit}, found ${found(data)}`);
    case 'exclusiveMaximum':
      return at(segments, `must be < ${String(p['limit'])}${unit}, found ${found(data)}`);
    case 'minLength':
      return at(segments, p['limit'] === 1 ? 'must not be empty' : `must have at least ${String(p['limit'])} characters, found ${found(data)}`);
    case 'minItems':
      return at(segments, `must list at least ${String(p['limit'])} item${p['limit'] === 1 ? '' : 's'}`);
    case 'pattern':
      return at(segments, w.pattern?.(segments, data) ?? `must match ${String(p['pattern'])}, found ${found(data)}`);
    case 'format':
      return at(segments, w.format?.(segments, data) ?? `must be a ${String(p['format'])}, found ${found(data)}`);
    default:
      return at(segments, e.message ?? 'is not valid');
  }
}

// ---- YAML source and positions -----------------------------------------------------------------

/** A parsed file: its value, and where in the text a path is. */
export interface Source {
  readonly value: unknown;
  /** Line and column (1-based) of the value at `segments`, or of its nearest enclosing value. */
  locate(segments: readonly (string | number)[]): { line?: number; column?: number };
}

/** Parses YAML (which reads JSON too); a syntax error is a fault with its position. */
export function parseSource(text: string): { readonly ok: true; readonly source: Source } | { readonly ok: false; readonly faults: readonly Fault[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      faults: doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { path: '(file)', message: `not valid JSON or YAML: ${e.message.split('\n')[0]}`, line: pos.line, column: pos.col };
      }),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An alias whose anchor is missing, or aliases expanding past the limit: the YAML parses
    // but has no value. Point at the first alias.
    let at: number | undefined;
    visit(doc, {
      Alias(_key, node) {
        at = node.range?.[0];
        return visit.BREAK;
      },
    });
    const pos = lineCounter.linePos(at ?? 0);
    return { ok: false, faults: [{ path: '(file)', message: `not valid JSON or YAML: ${(e as Error).message.split('\n')[0]}`, line: pos.line, column: pos.col }] };
  }
  const locate = (path: readonly (string | number)[]): { line?: number; column?: number } => {
    // A missing setting has no place of its own: point at the nearest enclosing one.
    let node: unknown = undefined;
    for (let n = path.length; n >= 0 && !isNode(node); n--) node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (!isNode(node) || !node.range) return {};
    const pos = lineCounter.linePos(node.range[0]);
    return { line: pos.line, column: pos.col };
  };
  return { ok: true, source: { value, locate } };
}

/** The faults with their positions in `source`. */
export function locateFaults(faults: readonly Fault[], source: Source): Fault[] {
  return faults.map((f) => ({ ...f, ...source.locate(f.segments ?? []) }));
}

// ---- sections of the server's file -------------------------------------------------------------

/**
 * The value with every `null` setting removed: in the server's file a setting written without a
 * value (`port:`) means its default, as it always has. Maps whose keys the operator names
 * (`keepNullsUnder`, e.g. `repositoryAccess`) keep their entries.
 */
export function withoutNulls(value: unknown, keepNullsUnder: ReadonlySet<string> = new Set(), key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutNulls(v, keepNullsUnder));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null && !keepNullsUnder.has(key)) continue;
    out[k] = withoutNulls(v, keepNullsUnder, k);
  }
  return out;
}

/** The faults with `at` put in front of their paths (a section checked on its own). */
export function within(at: readonly (string | number)[], faults: readonly Fault[]): Fault[] {
  return faults.map((f) => {
    const segments = [...at, ...(f.segments ?? [])];
    return { ...f, path: dotted(segments), segments };
  });
}

/**
 * Checks one section of the server's file on its own (absent or null: every default) and returns
 * it with its defaults filled in; throws one ConfigError naming every fault by its full path.
 */
export function checkSection<T>(validate: Validator, section: unknown, at: readonly string[], wording: Wording = {}, keepNullsUnder?: ReadonlySet<string>): T {
  const copy = structuredClone(withoutNulls(section ?? {}, keepNullsUnder, at[at.length - 1]));
  throwFaults(within(at, schemaFaults(validate, copy, wording)));
  return copy as T;
}

// ---- compile-time agreement of a schema and its TypeScript type --------------------------------

type SettingType<P> = P extends { readonly enum: readonly (infer E)[] }
  ? E
  : P extends { readonly type: 'integer' | 'number' }
    ? number
    : P extends { readonly type: 'boolean' }
      ? boolean
      : P extends { readonly type: 'string' }
        ? string
        : unknown;

/** The settings a flat section's schema describes, by name, with their value types. */
export type SettingsOf<S extends { readonly properties: object }> = { -readonly [K in keyof S['properties']]: SettingType<S['properties'][K]> };

/**
 * `true` when the schema's settings are exactly the type's keys and every value the type allows
 * fits the schema's primitive type; otherwise `never`, so `const ok: Agrees<S, T> = true` fails to
 * compile when a setting is added to one and not the other.
 */
export type Agrees<S extends { readonly properties: object }, T> = [keyof S['properties']] extends [keyof T]
  ? [keyof T] extends [keyof S['properties']]
    ? { [K in keyof T]-?: K extends keyof SettingsOf<S> ? (Exclude<T[K], undefined | null> extends SettingsOf<S>[K] ? true : false) : false }[keyof T] extends true
      ? true
      : never
    : never
  : never;
