// parseQuery: text -> checked AST, with every diagnostic. Never throws.

import type { CheckedExpr } from './checked.js';
import { checkSyntax } from './check.js';
import type { Diagnostic } from './diagnostic.js';
import { parseSyntax } from './parser.js';
import { complexityProblems, DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.js';
import { diagnostic } from './position.js';
import type { SyntaxExpr } from './syntax.js';

export interface ParseOptions {
  /** Epoch milliseconds that relative times (`-7d`) count back from; taken once per query. Default: the current time. */
  readonly now?: number;
  /** Complexity limits; a query over them is refused with `tooComplex` diagnostics. Default: DEFAULT_QUERY_LIMITS. */
  readonly limits?: QueryLimits;
}

export interface ParseResult {
  readonly ok: boolean;
  /** The checked expression; present exactly when `ok`. */
  readonly expr?: CheckedExpr;
  /** Every problem of the query, in order of position. */
  readonly diagnostics: readonly Diagnostic[];
  /** The syntax tree, partial when the query has syntax errors (an editor highlights from it). */
  readonly syntax: SyntaxExpr;
}

export function parseQuery(text: string, options: ParseOptions = {}): ParseResult {
  const now = options.now ?? Date.now();
  const { syntax, problems } = parseSyntax(text);
  const checked = checkSyntax(syntax, now);
  const costly = complexityProblems(syntax, options.limits ?? DEFAULT_QUERY_LIMITS);
  const extra = costly.length === 0 ? checked.problems : [...checked.problems, ...costly];
  const all = extra.length === 0 ? problems : [...problems, ...extra].sort((a, b) => a.start - b.start || a.end - b.end);
  if (all.length === 0 && checked.expr !== undefined) return { ok: true, expr: checked.expr, diagnostics: [], syntax };
  return { ok: false, diagnostics: all.map((d) => diagnostic(text, d)), syntax };
}
