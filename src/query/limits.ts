// Query complexity limits: a query's cost grows with its terms and with its wildcards that have no
// literal prefix (no index range can serve `*x*` outside the trigram tables, and each one collects
// every build it names), so a query over the limits is refused with a diagnostic before anything
// runs. The nesting limit (parser.ts MAX_NESTING) is separate because the parser itself recurses.

import type { DiagnosticInput } from './position.js';
import type { SyntaxExpr, SyntaxTerm, SyntaxWord } from './syntax.js';

export interface QueryLimits {
  /** Most terms (`field:value`, bare fields) one query may hold. */
  readonly maxTerms: number;
  /** Most wildcard values without a literal prefix (`*x`, `*x*`; `field:*` is not one). */
  readonly maxUnanchoredWildcards: number;
}

/**
 * 100 terms is several times what a person writes (or a generated list of 50 projects needs);
 * 980 negated terms took 40 s on SQLite. Eight infix/suffix patterns cover every realistic query.
 */
export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxTerms: 100, maxUnanchoredWildcards: 8 };

/** Whether a value, as a pattern, has a `*` before its first literal character (and any literal at all). */
function unanchored(word: SyntaxWord): boolean {
  // A leading `*` is always a wildcard (an escaped one starts with `\`); `*` alone or `**` is "known".
  return word.text.charCodeAt(0) === 42 && !/^\*+$/.test(word.text);
}

function termsOf(expr: SyntaxExpr, out: SyntaxTerm[]): void {
  switch (expr.kind) {
    case 'empty':
      return;
    case 'or':
    case 'and':
      for (const e of expr.operands) termsOf(e, out);
      return;
    case 'not':
      if (expr.operand !== undefined) termsOf(expr.operand, out);
      return;
    case 'group':
      if (expr.inner !== undefined) termsOf(expr.inner, out);
      return;
    case 'term':
      out.push(expr);
      return;
  }
}

/** The problems of a query over `limits`: each points at the first term beyond a limit. */
export function complexityProblems(syntax: SyntaxExpr, limits: QueryLimits = DEFAULT_QUERY_LIMITS): DiagnosticInput[] {
  const terms: SyntaxTerm[] = [];
  termsOf(syntax, terms);
  const problems: DiagnosticInput[] = [];
  if (terms.length > limits.maxTerms) {
    const first = terms[limits.maxTerms]!;
    problems.push({
      code: 'tooComplex',
      start: first.span.start,
      end: terms[terms.length - 1]!.span.end,
      message: `The query has ${terms.length} terms; at most ${limits.maxTerms} are allowed. Use wildcards or fewer terms`,
      expected: [],
    });
  }
  const wildcards = terms.filter((t) => t.value?.kind === 'word' && unanchored(t.value));
  if (wildcards.length > limits.maxUnanchoredWildcards) {
    const first = wildcards[limits.maxUnanchoredWildcards]!;
    problems.push({
      code: 'tooComplex',
      start: first.value!.span.start,
      end: first.value!.span.end,
      message: `The query has ${wildcards.length} values starting with '*'; at most ${limits.maxUnanchoredWildcards} are allowed, as each one is matched against every stored value. Start values with a literal (abc*) where you can`,
      expected: [],
    });
  }
  return problems;
}
