// The hand-written scanner against the chevrotain lexer that defines the token rules: the same
// tokens (type, text, offset) and the same errors (offset, length) for any text.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ILexingResult } from 'chevrotain';
import { referenceLexer } from '../../src/query/lexer.js';
import { scan } from '../../src/query/scan.js';

const view = (r: ILexingResult) => ({
  tokens: r.tokens.map((t) => [t.tokenType.name, t.image, t.startOffset]),
  errors: r.errors.map((e) => [e.offset, e.length]),
});

function same(text: string): void {
  expect(view(scan(text)), JSON.stringify(text)).toEqual(view(referenceLexer.tokenize(text)));
}

// Pieces that meet every rule: operators next to values or not, ranges with and without `to`,
// keywords as words and inside names, quotes with escapes, `=` where nothing starts, whitespace
// of every kind JavaScript's \s knows.
const PIECES = [
  'user', 'buildOutcome', 'value', 'tag', 'order', 'note', 'toast', 'an', 'and', 'AND', 'Or', 'or', 'not', 'NOT', 'to', 'TO', 'tO', 'n', 't', 'o', 'a',
  ':', '>', '>=', '<', '<=', '=', '==', '!', '-', '(', ')', '[', ']', '"', '\\', '\\"', '*', '5m', '-7d', '1m30s', '2024-03-01T08:00+02:00', 'k=v',
  ' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u0000', 'é', '😀', '\ud800',
];

describe('scan', () => {
  it('lexes like the reference lexer: examples', () => {
    for (const text of [
      '', ' ', 'buildOutcome:failed buildStartTime>-7d (tag:CI or tag:nightly) -user:bot',
      'buildDuration:[1m to 5m30s]', 'buildDuration:[1m 5m]', 'buildDuration:[ 1m TO 5m ]', '[to to]', '[a', 'x:[', 'x:]',
      'user: bob', 'a=b', 'a==b c', 'value:"CI Provider=GitHub*"', '"unterminated', '"a\\"b" c', '"\\', 'order:x', 'and:x', 'andx', 'toto', 'nota',
      '!x', '-x', 'not(x)', 'x:-', 'x:>=5', 'x>=5', 'x>==', '=', '==', 'a\u3000b', 'x:\u00a0y', '(a or b) and not c',
    ]) same(text);
  });

  it('lexes like the reference lexer: any sequence of pieces', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }), (parts) => {
      same(parts.join(''));
    }), { numRuns: 3000 });
  });

  it('lexes U+FFFF, alone in the last of the lexer\'s character buckets, as the reference lexer does (found by the property below)', () => {
    same('\uffff');
    same('a\uffff b');
    expect(view(referenceLexer.tokenize('\uffff')).errors).toEqual([]);
  });

  it('lexes like the reference lexer: any text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), same), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...' :()[]"\\=<>!-*tToOaAnNdD'.split('')), maxLength: 30 }), same), { numRuns: 3000 });
  });
});
