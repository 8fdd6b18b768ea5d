// Derives a build's searchable attributes from its header and events, reading each catalog
// field's `source` (see the event model): single-valued fields take the last event of their
// source type, multi-valued fields collect every occurrence (arrays flattened); a value that is
// absent or of the wrong type is unknown.
//
// The catalog is compiled once per tool into a plan (which event types matter, which column each
// field fills), because derivation runs for every ingested build.

import { fieldsOfTool, NAMED_FIELDS, TOOL_TYPES, type FieldDef, type ToolType } from '../../query/catalog.js';
import type { BuildHeader } from './canonical.js';
import { ATTRIBUTE_COLUMNS } from '../schema/columns.js';
import { failedTestsOf } from './test-events.js';
import type { AttributeValue, BuildAttributes, BuildEvent } from '../types.js';

export interface KeyValue {
  readonly name: string;
  readonly value: string;
}

export interface DerivedBuild {
  /** Keyed by catalog field name, original case; unknown values absent. */
  readonly attributes: BuildAttributes;
  /** Value of each ATTRIBUTE_COLUMNS entry, as stored: strings lower-cased, booleans 0/1, null = unknown. */
  readonly columns: readonly (string | number | null)[];
  /** Rows of build_values: [field column, lower-cased value]. */
  readonly values: readonly (readonly [string, string])[];
  /** Rows of build_custom_values: [lower-cased name, lower-cased value]. */
  readonly customValues: readonly (readonly [string, string])[];
  /** The `project` attribute in original case, or null. */
  readonly project: string | null;
}

interface Step {
  readonly field: FieldDef;
  /** Index into ATTRIBUTE_COLUMNS, or -1 for multi-valued fields. */
  readonly column: number;
}

interface ToolPlan {
  readonly steps: readonly Step[];
  /** Event types whose every occurrence matters (multi-valued sources). */
  readonly collect: ReadonlySet<string>;
}

const COLUMN_INDEX: ReadonlyMap<string, number> = new Map(ATTRIBUTE_COLUMNS.map((c, i) => [c.field.name, i]));

const PLANS: ReadonlyMap<string, ToolPlan> = new Map(
  TOOL_TYPES.map((t) => {
    const fields = fieldsOfTool(t);
    const collect = new Set<string>();
    for (const f of fields) {
      if (f.source.kind === 'customValue') collect.add('UserNamedValue');
      if (f.multi && f.source.kind === 'event') collect.add(f.source.eventType);
      if (f.source.kind === 'failedTests' || f.source.kind === 'flakyTests' || f.source.kind === 'testFailure') {
        collect.add('TestStarted');
        collect.add('TestFinished');
      }
    }
    return [t, { steps: fields.map((field) => ({ field, column: COLUMN_INDEX.get(field.name) ?? -1 })), collect }];
  }),
);

function at(data: unknown, path: readonly string[]): unknown {
  let v = data;
  for (const k of path) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The value if it has the field's type, else undefined (unknown). */
function typed(field: FieldDef, v: unknown): AttributeValue | undefined {
  switch (field.type) {
    case 'string':
    case 'keyValue':
      return typeof v === 'string' ? v : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? v : undefined;
    case 'number':
    case 'duration':
    case 'timestamp':
    case 'storageSize':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  }
}

export function deriveAttributes(header: BuildHeader & { readonly toolType: ToolType }, events: readonly BuildEvent[]): DerivedBuild {
  const plan = PLANS.get(header.toolType);
  if (plan === undefined) throw new Error(`Unknown tool type ${header.toolType}`);
  // One pass: the last event of each type, and every event of the collected types.
  const last = new Map<string, BuildEvent>();
  const all = new Map<string, BuildEvent[]>();
  for (const e of events) {
    const t = e.type.eventType;
    last.set(t, e);
    if (plan.collect.has(t)) {
      const list = all.get(t);
      if (list === undefined) all.set(t, [e]);
      else list.push(e);
    }
  }
  const attributes: Record<string, BuildAttributes[string]> = {};
  const columns: (string | number | null)[] = new Array<string | number | null>(ATTRIBUTE_COLUMNS.length).fill(null);
  const values: (readonly [string, string])[] = [];
  const customValues: (readonly [string, string])[] = [];
  // Read once for the two test fields.
  let tests: ReturnType<typeof failedTestsOf> | undefined;
  const testsOfBuild = () => (tests ??= failedTestsOf(all.get('TestStarted') ?? [], all.get('TestFinished') ?? []));

  for (const { field, column } of plan.steps) {
    const src = field.source;
    let v: AttributeValue | undefined;
    switch (src.kind) {
      case 'header':
        v = header[src.key];
        break;
      case 'startTime':
        v = last.get('BuildStarted')?.timestamp;
        break;
      case 'duration': {
        const s = last.get('BuildStarted');
        const f = last.get('BuildFinished');
        v = s !== undefined && f !== undefined ? f.timestamp - s.timestamp : undefined;
        break;
      }
      case 'failure': {
        const f = last.get('BuildFinished');
        if (f === undefined) break;
        const failures = f.data['failures'];
        if (failures === undefined || failures === null) v = false;
        else if (Array.isArray(failures)) {
          v = failures.some((x) => typeof x === 'object' && x !== null && (x as Record<string, unknown>)['classification'] === src.classification);
        }
        break;
      }
      case 'customValue': {
        const pairs: KeyValue[] = [];
        for (const e of all.get('UserNamedValue') ?? []) {
          const name = e.data['key'];
          const value = e.data['value'];
          if (typeof name === 'string' && typeof value === 'string') {
            pairs.push({ name, value });
            customValues.push([name.toLowerCase(), value.toLowerCase()]);
          }
        }
        if (pairs.length > 0) attributes[field.name] = pairs;
        continue;
      }
      case 'testFailure': {
        const t = testsOfBuild();
        if (t.anyTests) v = t.failed.length > 0;
        break;
      }
      case 'failedTests':
      case 'flakyTests': {
        const tests = testsOfBuild();
        const keys = src.kind === 'failedTests' ? tests.failed : tests.flaky;
        if (keys.length > 0) {
          attributes[field.name] = keys;
          for (const v of new Set(keys.map((f) => f.toLowerCase()))) values.push([field.column, v]);
        }
        continue;
      }
      case 'event': {
        if (!field.multi) {
          const e = last.get(src.eventType);
          if (e !== undefined) v = typed(field, at(e.data, src.path));
          break;
        }
        const collected: AttributeValue[] = [];
        for (const e of all.get(src.eventType) ?? []) {
          const raw = at(e.data, src.path);
          if (Array.isArray(raw)) {
            for (const item of raw) {
              const t = typed(field, item);
              if (t !== undefined) collected.push(t);
            }
          } else {
            const t = typed(field, raw);
            if (t !== undefined) collected.push(t);
          }
        }
        if (collected.length > 0) {
          attributes[field.name] = collected;
          // A value listed twice (or in two cases) is one value for search and facets: build_values
          // holds a (field, value, seq) row once (store migration 0015).
          for (const v of new Set(collected.map((c) => String(c).toLowerCase()))) values.push([field.column, v]);
        }
        continue;
      }
    }
    if (v === undefined) continue;
    attributes[field.name] = v;
    if (column >= 0) columns[column] = typeof v === 'string' ? v.toLowerCase() : typeof v === 'boolean' ? (v ? 1 : 0) : v;
  }
  const project = attributes[NAMED_FIELDS.project.name];
  return { attributes, columns, values, customValues, project: typeof project === 'string' ? project : null };
}
