// The parser of the search language (chevrotain, embedded actions: it builds the syntax AST
// directly, without a concrete syntax tree).
//
// The grammar is deliberately permissive: every part that a user may forget (a value after `:`,
// the term after `and`, a closing `)`, the `to` of a range) is optional in the grammar, and the
// parser reports its absence itself. So a faulty query never throws, every fault is reported with
// its exact place, and the syntax AST keeps everything that was there (an editor highlights it).
// Tokens that cannot start a term are reported and skipped where they stand.
//
// One parser instance is reused for every query (chevrotain's performance guide).

import { EMPTY_ALT, EmbeddedActionsParser, EOF, type IOrAlt, type IToken, type TokenType } from 'chevrotain';
import type { Span } from './checked.js';
import type { DiagnosticInput } from './position.js';
import {
  ALL_TOKENS,
  And,
  Bang,
  Identifier,
  LBracket,
  LParen,
  Minus,
  Negation,
  Not,
  Operator,
  Or,
  Quoted,
  RBracket,
  RParen,
  Stray,
  StrayInGroup,
  To,
  Word,
  tokenEnd,
} from './lexer.js';
import type { SyntaxExpr, SyntaxOperator, SyntaxRange, SyntaxValue, SyntaxWord } from './syntax.js';
import { scan } from './scan.js';

const span = (start: number, end: number): Span => ({ start, end });

/** `"a\"b"` -> `a"b`: only `\"` and `\\` are quote escapes; other backslashes stay for the pattern. */
function unquote(raw: string): { text: string; terminated: boolean } {
  let terminated = false;
  let out = '';
  let i = 1;
  for (; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const n = raw[i + 1]!;
      if (n === '"' || n === '\\') {
        out += n;
      } else {
        out += c + n;
      }
      i++;
    } else if (c === '"') {
      terminated = true;
      break;
    } else {
      out += c;
    }
  }
  return { text: out, terminated: terminated && i === raw.length - 1 };
}

function describe(token: IToken): string {
  if (token.tokenType === EOF) return 'the end of the query';
  return `'${token.image}'`;
}

function strayMessage(token: IToken): { message: string; expected: string[] } {
  const t = token.tokenType;
  const found = describe(token);
  if (t === RParen) return { message: `Unexpected ')': there is no '(' to close`, expected: ['a term'] };
  if (t === Or || t === And) return { message: `'${token.image}' needs a term on its left`, expected: ['a term'] };
  if (t === To) return { message: `'to' belongs inside a range: field:[from to to]`, expected: ['a term'] };
  if (t === RBracket) return { message: `Unexpected ']': there is no '[' to close`, expected: ['a term'] };
  if (t === Quoted) {
    return { message: `Unexpected ${found}: a value needs a field in front, as in field:value`, expected: ['field:value'] };
  }
  if (t.CATEGORIES?.includes(Operator)) return { message: `Unexpected ${found}: a field name must come before the operator`, expected: ['a field name'] };
  return { message: `Unexpected ${found}: a value needs a field in front, as in field:value`, expected: ['field:value'] };
}

class QueryParser extends EmbeddedActionsParser {
  text = '';
  problems: DiagnosticInput[] = [];

  constructor() {
    // chevrotain's own recovery stays off: the grammar makes every forgettable part optional and
    // reports it itself, which gives better messages and positions, and avoids the recovery
    // bookkeeping chevrotain does after every repetition.
    super(ALL_TOKENS as TokenType[], { recoveryEnabled: false, maxLookahead: 1 });
    this.performSelfAnalysis();
  }

  /** Reports that `what` should follow `after`; `found` is what stands there instead (default: the next token). */
  private missing(after: IToken, what: string, expected: string[], found?: IToken): void {
    const next = found ?? this.LA(1);
    if (next.tokenType === EOF) {
      const at = this.text.length;
      this.problems.push({ code: 'syntax', start: at, end: at, message: `Expected ${what} after '${after.image}', found the end of the query`, expected });
    } else {
      const hint =
        after.tokenType.CATEGORIES?.includes(Operator) && next.startOffset > tokenEnd(after)
          ? ` (the value must follow '${after.image}' directly, without a space)`
          : '';
      this.problems.push({
        code: 'syntax',
        start: next.startOffset,
        end: tokenEnd(next),
        message: `Expected ${what} after '${after.image}', found ${describe(next)}${hint}`,
        expected,
      });
    }
  }

  private word(token: IToken): SyntaxWord {
    if (token.tokenType === Quoted) {
      const { text, terminated } = unquote(token.image);
      if (!terminated) {
        this.problems.push({
          code: 'syntax',
          start: token.startOffset,
          end: tokenEnd(token),
          message: 'Unterminated quoted value: add the closing \'"\'',
          expected: ['"'],
        });
      }
      return { kind: 'word', raw: token.image, text, quoted: true, span: span(token.startOffset, tokenEnd(token)) };
    }
    return { kind: 'word', raw: token.image, text: token.image, quoted: false, span: span(token.startOffset, tokenEnd(token)) };
  }

  private strayRange(r: SyntaxRange): void {
    this.problems.push({
      code: 'syntax',
      start: r.span.start,
      end: r.span.end,
      message: 'A range needs a field in front, as in buildDuration:[1m to 5m]',
      expected: ['field:[from to to]'],
    });
  }

  private combine(parts: SyntaxExpr[], start: number, end: number): SyntaxExpr {
    if (parts.length === 0) return { kind: 'empty', span: span(start, end) };
    if (parts.length === 1) return parts[0]!;
    return { kind: 'and', operands: parts, span: span(parts[0]!.span.start, parts[parts.length - 1]!.span.end) };
  }

  /** Set by chevrotain while it records the grammar: semantic actions must not run then. */
  declare readonly RECORDING_PHASE: boolean;

  // Alternatives are created once and reused (chevrotain's performance guide): they capture no
  // locals, and return what they built.
  private bodyAlts?: IOrAlt<SyntaxExpr | undefined>[];
  private groupBodyAlts?: IOrAlt<SyntaxExpr | undefined>[];
  private orExprAlts?: IOrAlt<void>[];
  private conjunction: SyntaxExpr[] = [];
  private disjunction: SyntaxExpr[][] | undefined;
  private unaryAlts?: IOrAlt<SyntaxExpr>[];
  private valueAlts?: IOrAlt<SyntaxValue | undefined>[];
  private orRight?: () => SyntaxExpr;
  private andRight?: () => SyntaxExpr;
  private negOperand?: () => SyntaxExpr;
  private groupInner?: () => SyntaxExpr | undefined;
  private groupClose?: () => IToken;
  private termTail?: () => void;
  private termOp?: IToken;
  private termValue?: SyntaxValue;

  private reportStray(t: IToken): undefined {
    if (!this.RECORDING_PHASE) {
      const { message, expected } = strayMessage(t);
      this.problems.push({ code: 'syntax', start: t.startOffset, end: tokenEnd(t), message, expected });
    }
    return undefined;
  }

  /**
   * What a query or a group body holds, one at a time: terms, a stray token of kind `stray`
   * (reported and skipped; in a group `)` is not one, it ends the body), or a stray range.
   */
  private termAlts(stray: TokenType): IOrAlt<SyntaxExpr | undefined>[] {
    return [
      { ALT: () => this.SUBRULE(this.orExpr) },
      { ALT: () => this.reportStray(this.CONSUME(stray)) },
      {
        ALT: () => {
          const r = this.SUBRULE(this.range);
          if (!this.RECORDING_PHASE) this.strayRange(r);
          return undefined;
        },
      },
    ];
  }

  /** The terms of a query or group body (called once by each of those rules). */
  private terms(alts: IOrAlt<SyntaxExpr | undefined>[]): SyntaxExpr[] {
    const parts: SyntaxExpr[] = [];
    this.MANY(() => {
      const e = this.OR(alts);
      if (e !== undefined && !this.RECORDING_PHASE) parts.push(e);
    });
    return parts;
  }

  /** The whole query: terms, and stray tokens reported and skipped. */
  query = this.RULE('query', (): SyntaxExpr => {
    const parts = this.terms((this.bodyAlts ??= this.termAlts(Stray)));
    return this.RECORDING_PHASE ? (undefined as never) : this.combine(parts, 0, this.text.length);
  });

  /** Inside parentheses: like the query, but `)` ends it. */
  groupBody = this.RULE('groupBody', (): SyntaxExpr | undefined => {
    const parts = this.terms((this.groupBodyAlts ??= this.termAlts(StrayInGroup)));
    return this.RECORDING_PHASE || parts.length === 0 ? undefined : this.combine(parts, 0, 0);
  });

  /**
   * `or` over `and` in one rule (one rule invocation per group of terms instead of two): the
   * terms gather into the current conjunction, and each `or` starts the next one.
   */
  orExpr = this.RULE('orExpr', (): SyntaxExpr => {
    // The lists live in fields (the alternatives are reused closures); a group nested in a term
    // runs this rule again, so the outer lists are put back at the end.
    const outerConjunction = this.conjunction;
    const outerDisjunction = this.disjunction;
    const first = this.SUBRULE(this.unary);
    this.conjunction = [first];
    this.disjunction = undefined;
    const alts = (this.orExprAlts ??= [
      {
        ALT: () => {
          const and = this.CONSUME(And);
          const right = this.OPTION((this.andRight ??= () => this.SUBRULE2(this.unary)));
          if (this.RECORDING_PHASE) return;
          if (right === undefined) this.missing(and, 'a term', ['a term']);
          else this.conjunction.push(right);
        },
      },
      {
        ALT: () => {
          const or = this.CONSUME(Or);
          const right = this.OPTION2((this.orRight ??= () => this.SUBRULE3(this.unary)));
          if (this.RECORDING_PHASE) return;
          if (right === undefined) this.missing(or, 'a term', ['a term']);
          else {
            (this.disjunction ??= []).push(this.conjunction);
            this.conjunction = [right];
          }
        },
      },
      {
        ALT: () => {
          const right = this.SUBRULE4(this.unary);
          if (!this.RECORDING_PHASE) this.conjunction.push(right);
        },
      },
    ]);
    this.MANY(() => this.OR(alts));
    const last = this.conjunction;
    const ors = this.disjunction as SyntaxExpr[][] | undefined;
    this.conjunction = outerConjunction;
    this.disjunction = outerDisjunction;
    if (this.RECORDING_PHASE) return undefined as never;
    if (ors === undefined) return this.conjunctionOf(last);
    ors.push(last);
    const operands = ors.map((c) => this.conjunctionOf(c));
    return { kind: 'or', operands, span: span(operands[0]!.span.start, operands[operands.length - 1]!.span.end) };
  });

  private conjunctionOf(operands: SyntaxExpr[]): SyntaxExpr {
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands, span: span(operands[0]!.span.start, operands[operands.length - 1]!.span.end) };
  }

  /** A negation, a parenthesised group or a term (one rule: fewer rule invocations per term). */
  unary = this.RULE('unary', (): SyntaxExpr => {
    return this.OR(
      (this.unaryAlts ??= [
        {
          ALT: (): SyntaxExpr => {
            const op = this.CONSUME(Negation);
            const operand = this.OPTION((this.negOperand ??= () => this.SUBRULE(this.unary)));
            if (this.RECORDING_PHASE) return undefined as never;
            const prefix = op.tokenType === Minus ? '-' : op.tokenType === Bang ? '!' : 'not';
            if (operand === undefined) {
              this.missing(op, 'a term', ['a term']);
              return { kind: 'not', prefix, span: span(op.startOffset, tokenEnd(op)) };
            }
            return { kind: 'not', prefix, operand, span: span(op.startOffset, operand.span.end) };
          },
        },
        {
          ALT: (): SyntaxExpr => {
            const open = this.CONSUME(LParen);
            const inner = this.OPTION2((this.groupInner ??= () => this.SUBRULE(this.groupBody)));
            const close = this.OPTION3((this.groupClose ??= () => this.CONSUME(RParen)));
            if (this.RECORDING_PHASE) return undefined as never;
            if (close === undefined) this.missing(inner === undefined ? open : this.LA(0), "')'", ["')'"]);
            else if (inner === undefined) {
              this.problems.push({
                code: 'syntax',
                start: open.startOffset,
                end: tokenEnd(close),
                message: 'Empty parentheses: put a term inside',
                expected: ['a term'],
              });
            }
            const end = close !== undefined ? tokenEnd(close) : inner !== undefined ? inner.span.end : tokenEnd(open);
            return inner === undefined ? { kind: 'group', span: span(open.startOffset, end) } : { kind: 'group', inner, span: span(open.startOffset, end) };
          },
        },
        {
          ALT: (): SyntaxExpr => {
            const name = this.CONSUME(Identifier);
            // The tail is a reused closure that leaves its result in fields (a term never nests
            // inside its own value, so the fields cannot be overwritten before they are read).
            this.termOp = undefined;
            this.termValue = undefined;
            this.OPTION4((this.termTail ??= () => {
              this.termOp = this.CONSUME(Operator);
              this.termValue = this.OR2((this.valueAlts ??= [{ ALT: () => this.word(this.CONSUME(Word)) }, { ALT: () => this.SUBRULE2(this.range) }, { ALT: EMPTY_ALT(undefined) }]));
            }));
            const op = this.termOp as IToken | undefined;
            const value = this.termValue as SyntaxValue | undefined;
            if (this.RECORDING_PHASE) return undefined as never;
            const field = { name: name.image, span: span(name.startOffset, tokenEnd(name)) };
            if (op === undefined) return { kind: 'term', field, span: field.span };
            const operator = { op: op.image as SyntaxOperator, span: span(op.startOffset, tokenEnd(op)) };
            if (value === undefined) {
              this.missing(op, 'a value', ['value', '"quoted value"', '[from to to]']);
              return { kind: 'term', field, operator, span: span(name.startOffset, operator.span.end) };
            }
            if (value.span.start > operator.span.end) {
              // `user: "a"` would otherwise pass where `user: a` does not.
              this.problems.push({
                code: 'syntax',
                start: operator.span.end,
                end: value.span.start,
                message: `Remove the space: the value must follow '${op.image}' directly`,
                expected: ['value'],
              });
            }
            return { kind: 'term', field, operator, value, span: span(name.startOffset, value.span.end) };
          },
        },
      ]),
    );
  });

  range = this.RULE('range', (): SyntaxRange => {
    const open = this.CONSUME(LBracket);
    const from = this.OPTION(() => this.CONSUME(Word));
    const to = this.OPTION2(() => this.CONSUME(To));
    const upper = this.OPTION3(() => this.CONSUME2(Word));
    const close = this.OPTION4(() => this.CONSUME(RBracket));
    if (this.RECORDING_PHASE) return undefined as never;
    // Report the first missing part only: one fault, one message.
    if (from === undefined) this.missing(open, 'the lower bound of the range', ['value'], to ?? upper ?? close);
    else if (to === undefined) this.missing(from, "'to'", ["'to'"], upper ?? close);
    else if (upper === undefined) this.missing(to, 'the upper bound of the range', ['value'], close);
    else if (close === undefined) this.missing(upper, "']'", ["']'"]);
    const last = close ?? upper ?? to ?? from ?? open;
    const fromWord = from === undefined ? undefined : this.word(from);
    const toWord = upper === undefined ? undefined : this.word(upper);
    const s = span(open.startOffset, tokenEnd(last));
    if (fromWord !== undefined && toWord !== undefined) return { kind: 'range', from: fromWord, to: toWord, span: s };
    if (fromWord !== undefined) return { kind: 'range', from: fromWord, span: s };
    if (toWord !== undefined) return { kind: 'range', to: toWord, span: s };
    return { kind: 'range', span: s };
  });
}

let instance: QueryParser | undefined;

/** Deeper nesting is refused before parsing: the parser, checker and compilers recurse. */
export const MAX_NESTING = 200;

/**
 * The first token at which negations and parentheses nest deeper than MAX_NESTING, if any.
 * A stack of open parentheses and pending negations: a term resolves the negations in front of
 * it, a `)` closes its group and resolves the negations in front of that group.
 */
function tooDeeplyNested(tokens: readonly IToken[]): IToken | undefined {
  let depth = 0;
  // Only the nesting count matters; negations pending per open group are counted in `pending`.
  const pending: number[] = [0];
  for (const t of tokens) {
    const type = t.tokenType;
    if (type === LParen) {
      pending.push(0);
      depth++;
    } else if (type === RParen) {
      if (pending.length > 1) {
        depth -= pending.pop()! + 1;
        depth -= pending[pending.length - 1]!;
        pending[pending.length - 1] = 0;
      }
    } else if (type === Minus || type === Bang || type === Not) {
      pending[pending.length - 1]!++;
      depth++;
    } else if (type === Identifier) {
      depth -= pending[pending.length - 1]!;
      pending[pending.length - 1] = 0;
    }
    if (depth > MAX_NESTING) return t;
  }
  return undefined;
}

export interface SyntaxResult {
  readonly syntax: SyntaxExpr;
  readonly problems: readonly DiagnosticInput[];
}

/** Lexes and parses a query into its (possibly partial) syntax AST, with every syntax problem. */
export function parseSyntax(text: string): SyntaxResult {
  const parser = (instance ??= new QueryParser());
  const lexed = scan(text);
  const problems: DiagnosticInput[] = [];
  for (const e of lexed.errors) {
    const bad = text.slice(e.offset, e.offset + e.length);
    problems.push({
      code: 'syntax',
      start: e.offset,
      end: e.offset + e.length,
      message: `Unexpected character${e.length > 1 ? 's' : ''} '${bad}'${bad.startsWith('=') ? ": '=' belongs inside a value, as in value:name=value" : ''}`,
      expected: ['a term'],
    });
  }
  // NUL (U+0000) can stand in no stored text (PostgreSQL refuses it, FTS5 ends a query at it), so
  // a query holding one could only ever match nothing; it is reported where it stands instead.
  for (let at = text.indexOf('\0'); at !== -1; at = text.indexOf('\0', at + 1)) {
    problems.push({ code: 'syntax', start: at, end: at + 1, message: 'NUL characters (U+0000) are not allowed in a query', expected: [] });
  }
  // Nesting cannot be deeper than the number of tokens: short queries skip the scan.
  const tooDeep = lexed.tokens.length > MAX_NESTING ? tooDeeplyNested(lexed.tokens) : undefined;
  if (tooDeep !== undefined) {
    problems.push({
      code: 'syntax',
      start: tooDeep.startOffset,
      end: tokenEnd(tooDeep),
      message: `The query nests negations and parentheses more than ${MAX_NESTING} levels deep; simplify it`,
      expected: [],
    });
    return { syntax: { kind: 'empty', span: span(0, text.length) }, problems };
  }
  parser.text = text;
  parser.problems = problems;
  parser.input = lexed.tokens;
  const syntax = parser.query();
  // The grammar has no mandatory part, so chevrotain itself should never complain; if it does,
  // the complaint is reported like any other.
  // (`errors` clones its list on every read: read it only when chevrotain recorded something.)
  const recorded = (parser as unknown as { _errors: readonly unknown[] })._errors;
  for (const e of recorded.length === 0 ? [] : parser.errors) {
    const t = e.token;
    const start = Number.isNaN(t.startOffset) ? text.length : t.startOffset;
    problems.push({ code: 'syntax', start, end: Number.isNaN(t.startOffset) ? start : tokenEnd(t), message: e.message, expected: [] });
  }
  parser.problems = [];
  problems.sort((a, b) => a.start - b.start || a.end - b.end);
  return { syntax: syntax ?? { kind: 'empty', span: span(0, text.length) }, problems };
}

/** The parser's grammar, serialised (for the railroad diagrams). */
export function serializedGrammar(): ReturnType<QueryParser['getSerializedGastProductions']> {
  return (instance ??= new QueryParser()).getSerializedGastProductions();
}
