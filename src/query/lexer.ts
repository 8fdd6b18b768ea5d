// The lexer of the search language (chevrotain).
//
// Values are context-sensitive: `buildStartTime:2024-03-01T08:00+02:00` holds `:`, `-` and `+`
// inside the value, and `[1m to 5m30s]` ends a value at `]`. A custom pattern therefore matches a
// value only where one can stand: right after an operator (no space in between), or inside a range
// after `[` or `to`. Everywhere else the same characters lex as field names, keywords and operators.
//
// Queries are lexed by `scan` (scan.ts), a hand-written scanner equal to this lexer; the parser
// consumes these token types. Offsets only: line and column are computed lazily for diagnostics.

import { Lexer, createToken, type IToken, type TokenType } from 'chevrotain';

/**
 * Every character code the first-character optimisation can tell apart: 0..255 one by one, and one
 * representative of each higher bucket (chevrotain buckets codes above 255 by 255).
 */
function anyStartChar(excluded: string): number[] {
  const codes: number[] = [];
  for (let c = 0; c < 256; c++) if (!excluded.includes(String.fromCharCode(c))) codes.push(c);
  // One code of each of chevrotain's buckets above 255 (a bucket is 255 codes), and U+FFFF, alone
  // in the last one: without it a query of that character was an error here and a field name to
  // the scanner (found by test/query/scan.test.ts).
  for (let c = 256; c < 65536; c += 255) codes.push(c);
  codes.push(0xffff);
  return codes;
}

// Categories: the parser consumes these instead of each member.
export const Operator = createToken({ name: 'Operator', pattern: Lexer.NA });
export const Negation = createToken({ name: 'Negation', pattern: Lexer.NA });
/** A value: unquoted or quoted. */
export const Word = createToken({ name: 'Word', pattern: Lexer.NA });
/** Tokens that cannot start a term; at the top level (or inside parentheses) they are reported and skipped. */
export const Stray = createToken({ name: 'Stray', pattern: Lexer.NA });
export const StrayInGroup = createToken({ name: 'StrayInGroup', pattern: Lexer.NA });

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED, line_breaks: true });

const VALUE_RE = /[^\s()"]+/y;
const BOUND_RE = /[^\s()"\]]+/y;

/** A value where one can stand (see VALUE_CONTEXT below). */
function matchValue(text: string, offset: number, tokens: IToken[]): RegExpExecArray | null {
  const prev = tokens[tokens.length - 1];
  if (prev === undefined) return null;
  const context = VALUE_CONTEXT[prev.tokenTypeIdx];
  if (context === 1) {
    // The value must follow its operator directly: `user: bob` is a missing value, not `user:bob`.
    if (prev.startOffset + prev.image.length !== offset || text.charCodeAt(offset) === 91 /* [ */) return null;
    VALUE_RE.lastIndex = offset;
    return VALUE_RE.exec(text);
  }
  if (context === 2) {
    BOUND_RE.lastIndex = offset;
    return BOUND_RE.exec(text);
  }
  if (context === 3 && tokens[tokens.length - 2]?.tokenType === LBracket) {
    // After the lower bound of a range a forgotten `to` (`[1m 5m]`) still leaves a bound here.
    BOUND_RE.lastIndex = offset;
    const m = BOUND_RE.exec(text);
    return m !== null && !/^to$/i.test(m[0]) ? m : null;
  }
  return null;
}

export const Value = createToken({
  name: 'Value',
  pattern: { exec: matchValue },
  line_breaks: false,
  start_chars_hint: anyStartChar(' \t\n\r\f\v()"'),
  categories: [Word, Stray, StrayInGroup],
});

/** `"…"` with `\"` and `\\`; an unterminated one runs to the end (the parser reports it). */
export const Quoted = createToken({
  name: 'Quoted',
  pattern: /"(?:[^"\\]|\\[^]?)*"?/,
  start_chars_hint: ['"'],
  line_breaks: true,
  categories: [Word, Stray, StrayInGroup],
});

export const LParen = createToken({ name: 'LParen', pattern: '(', label: "'('" });
export const RParen = createToken({ name: 'RParen', pattern: ')', label: "')'", categories: [Stray] });
export const LBracket = createToken({ name: 'LBracket', pattern: '[', label: "'['" });
export const RBracket = createToken({ name: 'RBracket', pattern: ']', label: "']'", categories: [Stray, StrayInGroup] });
export const Ge = createToken({ name: 'Ge', pattern: '>=', label: "'>='", categories: [Operator, Stray, StrayInGroup] });
export const Le = createToken({ name: 'Le', pattern: '<=', label: "'<='", categories: [Operator, Stray, StrayInGroup] });
export const Gt = createToken({ name: 'Gt', pattern: '>', label: "'>'", categories: [Operator, Stray, StrayInGroup] });
export const Lt = createToken({ name: 'Lt', pattern: '<', label: "'<'", categories: [Operator, Stray, StrayInGroup] });
export const Colon = createToken({ name: 'Colon', pattern: ':', label: "':'", categories: [Operator, Stray, StrayInGroup] });
export const Minus = createToken({ name: 'Minus', pattern: '-', label: "'-'", categories: [Negation] });
export const Bang = createToken({ name: 'Bang', pattern: '!', label: "'!'", categories: [Negation] });

/** A field name: anything up to whitespace, a parenthesis, a quote, a bracket, an operator, `=` or `!`. */
export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[^\s()"[\]:<>=!-][^\s()"[\]:<>=!]*/,
  start_chars_hint: anyStartChar(' \t\n\r\f\v()"[]:<>=!-'),
  line_breaks: false,
  label: 'field name',
});

// Keywords are case-insensitive; `longer_alt` keeps `order` and `note` field names whole.
export const And = createToken({ name: 'And', pattern: /and/i, longer_alt: Identifier, label: "'and'", categories: [Stray, StrayInGroup] });
export const Or = createToken({ name: 'Or', pattern: /or/i, longer_alt: Identifier, label: "'or'", categories: [Stray, StrayInGroup] });
export const Not = createToken({ name: 'Not', pattern: /not/i, longer_alt: Identifier, label: "'not'", categories: [Negation] });
export const To = createToken({ name: 'To', pattern: /to/i, longer_alt: Identifier, label: "'to'", categories: [Stray, StrayInGroup] });

/** Lexing order: the context-sensitive value first, keywords before the identifier they resemble. */
export const ALL_TOKENS: readonly TokenType[] = [
  WhiteSpace,
  Value,
  Quoted,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Ge,
  Le,
  Gt,
  Lt,
  Colon,
  Minus,
  Bang,
  And,
  Or,
  Not,
  To,
  Identifier,
  Operator,
  Negation,
  Word,
  Stray,
  StrayInGroup,
];

/**
 * The token rules as a chevrotain lexer: the definition `scan` (scan.ts) implements by hand for
 * speed, and the reference a property test holds it to.
 */
export const referenceLexer = new Lexer(ALL_TOKENS as TokenType[], {
  positionTracking: 'onlyOffset',
  ensureOptimizations: true,
  recoveryEnabled: true,
});

// Token indexes are assigned when the lexer is built; the value context table reads them.
/**
 * What may follow a token, by its tokenTypeIdx: 0 no value; 1 a value right after an operator;
 * 2 a range bound (after `[` or `to`); 3 after a value (a bound, when the value follows `[`).
 */
export const VALUE_CONTEXT = new Uint8Array(Math.max(...ALL_TOKENS.map((t) => t.tokenTypeIdx ?? 0)) + 1);
for (const t of [Colon, Gt, Ge, Lt, Le]) VALUE_CONTEXT[t.tokenTypeIdx!] = 1;
for (const t of [LBracket, To]) VALUE_CONTEXT[t.tokenTypeIdx!] = 2;
for (const t of [Value, Quoted]) VALUE_CONTEXT[t.tokenTypeIdx!] = 3;

/** Offset just after a token (tokens carry only their start offset). */
export function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}
