// Classifies the query text for highlighting with the project's own lexer (src/query/lexer.ts),
// so the editor colours exactly what the parser sees: no second grammar.

import { tokenEnd } from '../src/query/lexer.js';
import { scan } from '../src/query/scan.js';

export type TokenClass = 'field' | 'operator' | 'keyword' | 'value' | 'string' | 'paren' | 'negation' | 'wildcard' | 'error';

export interface ClassifiedToken {
  readonly from: number;
  readonly to: number;
  readonly cls: TokenClass;
}

const BY_TOKEN_NAME: Readonly<Record<string, TokenClass>> = {
  Identifier: 'field',
  Value: 'value',
  Quoted: 'string',
  Colon: 'operator',
  Gt: 'operator',
  Ge: 'operator',
  Lt: 'operator',
  Le: 'operator',
  And: 'keyword',
  Or: 'keyword',
  Not: 'keyword',
  To: 'keyword',
  Minus: 'negation',
  Bang: 'negation',
  LParen: 'paren',
  RParen: 'paren',
  LBracket: 'paren',
  RBracket: 'paren',
};

/** Unescaped `*` wildcards inside a value, as their own tokens (`\*` is a literal star). */
function splitWildcards(from: number, image: string, cls: TokenClass, out: ClassifiedToken[]): void {
  let start = 0;
  for (let i = 0; i < image.length; i++) {
    const c = image[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '*') continue;
    if (i > start) out.push({ from: from + start, to: from + i, cls });
    out.push({ from: from + i, to: from + i + 1, cls: 'wildcard' });
    start = i + 1;
  }
  if (start < image.length) out.push({ from: from + start, to: from + image.length, cls });
}

export function classify(text: string): ClassifiedToken[] {
  const { tokens, errors } = scan(text);
  const out: ClassifiedToken[] = [];
  for (const t of tokens) {
    const cls = BY_TOKEN_NAME[t.tokenType.name] ?? 'value';
    if (cls === 'value' || cls === 'string') splitWildcards(t.startOffset, t.image, cls, out);
    else out.push({ from: t.startOffset, to: tokenEnd(t), cls });
  }
  for (const e of errors) out.push({ from: e.offset, to: e.offset + Math.max(1, e.length), cls: 'error' });
  return out.filter((t) => t.to > t.from && t.to <= text.length).sort((a, b) => a.from - b.from || a.to - b.to);
}
