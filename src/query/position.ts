// Line and column are computed only when a diagnostic needs them: tokens carry offsets only.

import type { Diagnostic, DiagnosticCode } from './diagnostic.js';

/** 1-based line and column (in UTF-16 code units) of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export interface DiagnosticInput {
  readonly code: DiagnosticCode;
  readonly start: number;
  readonly end: number;
  readonly message: string;
  readonly expected: readonly string[];
  readonly suggestion?: string;
}

export function diagnostic(text: string, d: DiagnosticInput): Diagnostic {
  const start = Math.max(0, Math.min(d.start, text.length));
  const end = Math.max(start, Math.min(d.end, text.length));
  const { line, column } = lineColumn(text, start);
  const out: Diagnostic = { code: d.code, start, end, line, column, message: d.message, expected: d.expected };
  return d.suggestion === undefined ? out : { ...out, suggestion: d.suggestion };
}
