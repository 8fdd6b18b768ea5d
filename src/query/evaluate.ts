// The reference evaluator: the executable specification of search-semantics.md over one build's
// attributes, in plain TypeScript. The SQL compiler is tested against it (SQLite and PostgreSQL
// must return exactly the builds for which this returns true), so it favours obviousness over speed.

import { NAMED_FIELDS, type FieldDef } from './catalog.js';
import { ordinal } from './check.js';
import type { CheckedExpr, CompareOp, Pattern, Predicate, TypedValue } from './checked.js';
import type { AttributeValue, BuildAttributes } from './attributes.js';

export interface EvaluatedBuild {
  readonly toolType: string;
  readonly attributes: BuildAttributes;
}

/**
 * Whether `build` matches `expr`. Negation is complement: every build matches exactly one of e and -e.
 * A term on a tool-specific field (`field:null` included) matches only builds of that tool.
 */
export function evaluate(expr: CheckedExpr, build: EvaluatedBuild): boolean {
  switch (expr.kind) {
    case 'all':
      return true;
    case 'and':
      return expr.operands.every((e) => evaluate(e, build));
    case 'or':
      return expr.operands.some((e) => evaluate(e, build));
    case 'not':
      return !evaluate(expr.operand, build);
    case 'term':
      // A tool-specific field is a property of that tool's builds only: no predicate on it, not
      // even "unknown" (`field:null`), matches a build of another tool.
      if (expr.field.tool !== null && expr.field.tool !== build.toolType.toLowerCase()) return false;
      return matchTerm(expr.field, expr.predicate, build);
  }
}

/**
 * Whole-value, case-insensitive wildcard match: `pattern.segments` are literal (lower-cased) runs
 * separated by `*`, which matches any run of characters, the empty run included. The value is
 * lower-cased with Unicode rules (String.prototype.toLowerCase), as the store keeps it.
 */
export function matchPattern(pattern: Pattern, value: string): boolean {
  return matchSegments(
    pattern.segments.map((s) => s.toLowerCase()),
    value.toLowerCase(),
  );
}

/**
 * The one wildcard matcher: `segments` are literal runs separated by `*` (which matches any run of
 * characters, the empty run included), compared with `text` as they are (callers fold case when
 * their rule says so). Used by the search language and by provenance policies.
 */
export function matchSegments(segs: readonly string[], text: string): boolean {
  if (segs.length === 0) return text === '';
  if (segs.length === 1) return text === segs[0];
  const first = segs[0]!;
  const last = segs[segs.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  // Middle segments in order, each as early as possible (leftmost match is optimal for `*` only).
  let pos = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    const at = text.indexOf(seg, pos);
    if (at < 0 || at + seg.length > end) return false;
    pos = at + seg.length;
  }
  return true;
}

type KeyValue = { readonly name: string; readonly value: string };

function isKeyValue(v: unknown): v is KeyValue {
  return typeof v === 'object' && v !== null && typeof (v as KeyValue).name === 'string' && typeof (v as KeyValue).value === 'string';
}

/** The field's values on the build: [] when unknown. A single value becomes a one-element list. */
function valuesOf(field: FieldDef, build: EvaluatedBuild): readonly unknown[] {
  let raw = build.attributes[field.name];
  // buildTool is the build's tool type; take it from the build when the attributes leave it out.
  if (raw === undefined && field === NAMED_FIELDS.buildTool) raw = build.toolType;
  if (raw === undefined || raw === null) return [];
  return Array.isArray(raw) ? (raw as readonly unknown[]) : [raw];
}

function matchTerm(field: FieldDef, predicate: Predicate, build: EvaluatedBuild): boolean {
  const values = valuesOf(field, build);
  switch (predicate.kind) {
    case 'known':
      return values.length > 0;
    case 'unknown':
      return values.length === 0;
    case 'boolean':
      return values.some((v) => v === predicate.value);
    case 'pattern':
      // On the key-value field a bare pattern is `name=*`: it matches the custom values' names.
      if (field.type === 'keyValue') return values.some((v) => isKeyValue(v) && matchPattern(predicate.pattern, v.name));
      return values.some((v) => isScalar(v) && matchPattern(predicate.pattern, String(v)));
    case 'keyValue':
      return values.some((v) => isKeyValue(v) && matchPattern(predicate.name, v.name) && matchPattern(predicate.value, v.value));
    case 'compare':
      return values.some((v) => typeof v === 'number' && compares(v, predicate.op, predicate.value));
    case 'range':
      return values.some((v) => typeof v === 'number' && inRange(v, predicate.from, predicate.to));
  }
}

/**
 * The search semantics' rules for ordered values, stated directly (not shared with the SQL
 * compiler's bounds, so the differential tests compare two readings of the rules):
 * a timestamp names the span of its precision, `field:v` matches within it and `>`, `>=`, `<`,
 * `<=` compare with its instant; other ordered values are exact numbers.
 */
function compares(n: number, op: CompareOp, v: TypedValue): boolean {
  const at = ordinal(v);
  switch (op) {
    case 'eq':
      return v.type === 'timestamp' ? at <= n && n < at + v.spanMs : n === at;
    case 'gt':
      return n > at;
    case 'ge':
      return n >= at;
    case 'lt':
      return n < at;
    case 'le':
      return n <= at;
  }
}

/** `[a to b]`: from a inclusive to b inclusive; a timestamp b to the end of its span. */
function inRange(n: number, from: TypedValue, to: TypedValue): boolean {
  if (n < ordinal(from)) return false;
  return to.type === 'timestamp' ? n < to.instant + to.spanMs : n <= ordinal(to);
}

function isScalar(v: unknown): v is AttributeValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
