// The fast lexer: a hand-written scanner that yields exactly the tokens and errors of the
// chevrotain lexer in lexer.ts (`referenceLexer`), which stays the readable definition of the token
// rules. A property test holds the two equal on arbitrary text.
//
// Why: lexing was a third of parse+check time, most of it chevrotain's generic loop (candidate
// lists per character, a regular expression per token, a custom-pattern call for every value).
// Here one switch on the character code decides, and a run of characters is measured once.

import type { ILexingError, ILexingResult, IToken, TokenType } from 'chevrotain';
import { And, Bang, Colon, Ge, Gt, Identifier, LBracket, Le, LParen, Lt, Minus, Not, Or, Quoted, RBracket, RParen, To, VALUE_CONTEXT, Value } from './lexer.js';

/** JavaScript's `\s`: the characters the reference lexer's patterns treat as whitespace. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

const QUOTE = 34; // "
const LPAREN = 40;
const RPAREN = 41;
const LBRACKET = 91;
const RBRACKET = 93;
const BACKSLASH = 92;

// What each ASCII character ends (a bit per kind of run); above ASCII only whitespace ends a run.
const ENDS_VALUE = 1; // whitespace, a parenthesis or a quote
const ENDS_BOUND = 2; // as a value, and `]`
const ENDS_IDENTIFIER = 4; // as a bound, and `[ : < > = !`
const ENDS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (isSpace(c) || c === LPAREN || c === RPAREN || c === QUOTE) ENDS[c] = ENDS_VALUE | ENDS_BOUND | ENDS_IDENTIFIER;
  else if (c === RBRACKET) ENDS[c] = ENDS_BOUND | ENDS_IDENTIFIER;
  else if ('[:<>=!'.includes(String.fromCharCode(c))) ENDS[c] = ENDS_IDENTIFIER;
}

/** End of the run from `from` up to the first character that ends this kind of run. */
function runEnd(text: string, from: number, kind: number): number {
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 ? (ENDS[c]! & kind) !== 0 : isSpace(c)) break;
  }
  return i;
}

/** End of the value starting at `at`, or -1 when no value can stand there (matchValue in lexer.ts). */
function valueEnd(text: string, at: number, tokens: readonly IToken[]): number {
  const n = tokens.length;
  if (n === 0) return -1;
  const prev = tokens[n - 1]!;
  switch (VALUE_CONTEXT[prev.tokenTypeIdx]) {
    case 1: {
      if (prev.startOffset + prev.image.length !== at || text.charCodeAt(at) === LBRACKET) return -1;
      const end = runEnd(text, at, ENDS_VALUE);
      return end > at ? end : -1;
    }
    case 2: {
      const end = runEnd(text, at, ENDS_BOUND);
      return end > at ? end : -1;
    }
    case 3: {
      if (n < 2 || tokens[n - 2]!.tokenType !== LBracket) return -1;
      const end = runEnd(text, at, ENDS_BOUND);
      return end > at && !(end - at === 2 && isTo(text, at)) ? end : -1;
    }
    default:
      return -1;
  }
}

function isTo(text: string, at: number): boolean {
  return (text.charCodeAt(at) | 32) === 116 && (text.charCodeAt(at + 1) | 32) === 111;
}

/** The keyword `and`, `or`, `not` or `to` (in any case) when the `length` characters at `at` spell it. */
function keywordAt(text: string, at: number, length: number): TokenType | undefined {
  if (length > 3) return undefined;
  const c0 = text.charCodeAt(at) | 32;
  const c1 = text.charCodeAt(at + 1) | 32;
  if (length === 2) return c0 === 111 && c1 === 114 ? Or : c0 === 116 && c1 === 111 ? To : undefined;
  if (length !== 3) return undefined;
  const c2 = text.charCodeAt(at + 2) | 32;
  return c0 === 97 && c1 === 110 && c2 === 100 ? And : c0 === 110 && c1 === 111 && c2 === 116 ? Not : undefined;
}

function token(text: string, start: number, end: number, type: TokenType): IToken {
  // The shape of chevrotain's offset-only tokens, so the parser sees one hidden class.
  return { image: text.slice(start, end), startOffset: start, tokenTypeIdx: type.tokenTypeIdx!, tokenType: type } as IToken;
}

/** End of the token `next` found last (a module variable: no pair to allocate per token). */
let end = 0;

function ending(at: number, type: TokenType): TokenType {
  end = at;
  return type;
}

/** The type of the token starting at `at` (not whitespace), its end in `end`; undefined when none can start there. */
function next(text: string, at: number, tokens: readonly IToken[]): TokenType | undefined {
  const value = valueEnd(text, at, tokens);
  if (value !== -1) return ending(value, Value);
  switch (text.charCodeAt(at)) {
    case QUOTE: {
      let i = at + 1;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) return ending(i + 1, Quoted);
        i += d === BACKSLASH ? 2 : 1;
      }
      return ending(text.length, Quoted);
    }
    case LPAREN:
      return ending(at + 1, LParen);
    case RPAREN:
      return ending(at + 1, RParen);
    case LBRACKET:
      return ending(at + 1, LBracket);
    case RBRACKET:
      return ending(at + 1, RBracket);
    case 62: // >
      return text.charCodeAt(at + 1) === 61 ? ending(at + 2, Ge) : ending(at + 1, Gt);
    case 60: // <
      return text.charCodeAt(at + 1) === 61 ? ending(at + 2, Le) : ending(at + 1, Lt);
    case 58: // :
      return ending(at + 1, Colon);
    case 45: // -
      return ending(at + 1, Minus);
    case 33: // !
      return ending(at + 1, Bang);
    case 61: // = : nothing starts with it outside a value
      return undefined;
  }
  end = runEnd(text, at + 1, ENDS_IDENTIFIER);
  // A keyword only when the field name that would start here is no longer (`order` stays a name).
  return keywordAt(text, at, end - at) ?? Identifier;
}

/** Lexes a query: the tokens and errors `referenceLexer.tokenize(text)` gives, faster. */
export function scan(text: string): ILexingResult {
  const tokens: IToken[] = [];
  const errors: ILexingError[] = [];
  let at = 0;
  while (at < text.length) {
    if (isSpace(text.charCodeAt(at))) {
      at++;
      continue;
    }
    const type = next(text, at, tokens);
    if (type !== undefined) {
      tokens.push(token(text, at, end, type));
      at = end;
      continue;
    }
    // Like chevrotain's recovery: drop characters up to the next one a token can start at. Only
    // `=` starts nothing (a value could, but then one would have matched here already).
    const start = at;
    do at++;
    while (at < text.length && text.charCodeAt(at) === 61);
    errors.push({ offset: start, length: at - start, line: undefined, column: undefined, message: `unexpected character: ->${text[start]}<- at offset: ${start}, skipped ${at - start} characters.` });
  }
  return { tokens, errors, groups: {} };
}
