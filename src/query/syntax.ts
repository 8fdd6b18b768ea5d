// The syntax AST: what the parser builds before fields and values are checked. It mirrors the
// text closely (an editor highlights from it) and may be partial: a part the parser could not find
// is absent, and a diagnostic says why.

import type { Span } from './checked.js';

export type SyntaxOperator = ':' | '>' | '>=' | '<' | '<=';

/** A value as written: `raw` is the source text, `text` the content (quotes removed, `\"` and `\\` unescaped). */
export interface SyntaxWord {
  readonly kind: 'word';
  readonly raw: string;
  readonly text: string;
  readonly quoted: boolean;
  readonly span: Span;
}

export interface SyntaxRange {
  readonly kind: 'range';
  readonly from?: SyntaxWord;
  readonly to?: SyntaxWord;
  readonly span: Span;
}

export type SyntaxValue = SyntaxWord | SyntaxRange;

export interface SyntaxTerm {
  readonly kind: 'term';
  readonly field: { readonly name: string; readonly span: Span };
  readonly operator?: { readonly op: SyntaxOperator; readonly span: Span };
  readonly value?: SyntaxValue;
  readonly span: Span;
}

export type SyntaxExpr =
  /** Nothing but whitespace. */
  | { readonly kind: 'empty'; readonly span: Span }
  | { readonly kind: 'or'; readonly operands: readonly SyntaxExpr[]; readonly span: Span }
  | { readonly kind: 'and'; readonly operands: readonly SyntaxExpr[]; readonly span: Span }
  | { readonly kind: 'not'; readonly prefix: '-' | '!' | 'not'; readonly operand?: SyntaxExpr; readonly span: Span }
  | { readonly kind: 'group'; readonly inner?: SyntaxExpr; readonly span: Span }
  | SyntaxTerm;
