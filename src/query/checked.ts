// The checked AST: what the checker produces from a parse, and what everything downstream reads
// (the SQL compiler, the reference evaluator, the formatter). Fields are resolved to catalog
// entries and values are parsed into typed values. Every node keeps the span of its source text.

import type { FieldDef } from './catalog.js';

/** Half-open range of offsets [start, end) into the query text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * A wildcard pattern: literal segments (already lower-cased with Unicode rules) separated by `*`.
 * `abc` is ['abc'], `abc*` is ['abc', ''], `*abc*` is ['', 'abc', ''], `*` is ['', ''].
 * `text` is the value as written (without quotes), kept for printing.
 */
export interface Pattern {
  readonly segments: readonly string[];
  readonly text: string;
}

export type TimestampPrecision = 'day' | 'minute' | 'second' | 'millisecond';

export type TypedValue =
  | { readonly type: 'duration'; readonly ms: number; readonly text: string }
  | { readonly type: 'number'; readonly value: number; readonly text: string }
  | { readonly type: 'storageSize'; readonly bytes: number; readonly text: string }
  | {
      readonly type: 'timestamp';
      /** Epoch milliseconds of the instant the value names (relative values resolved against "now"). */
      readonly instant: number;
      /** Length of the value's span in ms: a date is one day, a minute value one minute, and so on. */
      readonly spanMs: number;
      readonly precision: TimestampPrecision;
      /** For a relative value (`-7d`), the duration subtracted from now. */
      readonly relativeMs?: number;
      readonly text: string;
    };

export type CompareOp = 'eq' | 'gt' | 'ge' | 'lt' | 'le';

export type Predicate =
  /** `field:*` — the value is known. */
  | { readonly kind: 'known' }
  /** `field:null` (fields that accept null) — the value is unknown. */
  | { readonly kind: 'unknown' }
  /** `field:true`, `field:false`, bare `field` (true). */
  | { readonly kind: 'boolean'; readonly value: boolean }
  /** String fields: whole-value, case-insensitive wildcard match. */
  | { readonly kind: 'pattern'; readonly pattern: Pattern }
  /** Key-value fields: one custom value whose name and value both match. */
  | { readonly kind: 'keyValue'; readonly name: Pattern; readonly value: Pattern }
  /** Ordered fields: `field:v` (eq) and `field>v` etc. */
  | { readonly kind: 'compare'; readonly op: CompareOp; readonly value: TypedValue }
  /** Ordered fields: `field:[from to to]`, inclusive (timestamps: to the end of `to`'s span). */
  | { readonly kind: 'range'; readonly from: TypedValue; readonly to: TypedValue };

export type CheckedExpr =
  /** The empty query: every build. */
  | { readonly kind: 'all'; readonly span: Span }
  | { readonly kind: 'and'; readonly operands: readonly CheckedExpr[]; readonly span: Span }
  | { readonly kind: 'or'; readonly operands: readonly CheckedExpr[]; readonly span: Span }
  /** Set complement over all builds the caller may see. */
  | { readonly kind: 'not'; readonly operand: CheckedExpr; readonly span: Span }
  | { readonly kind: 'term'; readonly field: FieldDef; readonly predicate: Predicate; readonly span: Span };

/** Numeric bounds of an ordered predicate, as the store and the evaluator compare them. */
export interface Bounds {
  readonly min?: number;
  readonly minInclusive: boolean;
  readonly max?: number;
  readonly maxInclusive: boolean;
}
