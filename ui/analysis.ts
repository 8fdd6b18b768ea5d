// One parse per text: the linter, the tree view and the status line all ask about the same text,
// so the last result is kept.

import { parseQuery, type ParseResult } from '../src/query/index.js';

let last: { text: string; result: ParseResult } | undefined;

export function analyze(text: string): ParseResult {
  if (last?.text !== text) last = { text, result: parseQuery(text, { now: Date.now() }) };
  return last.result;
}
