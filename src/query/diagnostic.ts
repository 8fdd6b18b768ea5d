// A problem found in a query. Never thrown: the parser and checker return all of them.

export type DiagnosticCode =
  | 'syntax'
  | 'unknownField'
  | 'invalidValue'
  | 'invalidOperator'
  | 'invalidRange'
  /** Over a complexity limit (limits.ts): too many terms or wildcards without a literal prefix. */
  | 'tooComplex';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  /** Offsets into the query text, half-open [start, end). At the end of input, start = end = length. */
  readonly start: number;
  readonly end: number;
  /** 1-based line and column of `start`. */
  readonly line: number;
  readonly column: number;
  /** A message a person can act on. */
  readonly message: string;
  /** What would have been valid here (token names, value forms, allowed values). */
  readonly expected: readonly string[];
  /** "Did you mean" replacement text, when one is close enough. */
  readonly suggestion?: string;
}
