// The search language: parse, check, format, complete, explain. Browser-safe (no node: imports):
// the playground bundles this directory.

export { parseQuery, type ParseOptions, type ParseResult } from './parse.js';
export type { CheckedExpr, Predicate, Pattern, TypedValue, CompareOp, Span, TimestampPrecision, Bounds } from './checked.js';
export type { Diagnostic, DiagnosticCode } from './diagnostic.js';
export { DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.js';
export type { SyntaxExpr, SyntaxTerm, SyntaxValue, SyntaxWord, SyntaxRange, SyntaxOperator } from './syntax.js';
export * from './catalog.js';
export { patternMatches, parseDuration, parseTimestamp, parseStorageSize, parseNumber, parsePattern } from './values.js';
export { ordinal } from './check.js';
export { formatQuery, quoteValue } from './format.js';
export { formatDiagnostic } from './frame.js';
export { explainText, explainTree } from './explain.js';
export { completeQuery, valuePosition, type Completion, type CompletionKind, type ValuePosition } from './complete.js';
