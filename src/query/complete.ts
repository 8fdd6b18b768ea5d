// Completion: what fits at a cursor position of a query. The text before the cursor is lexed (the
// same lexer as parsing, so a value context is recognised exactly as the parser sees it), and the
// last token decides: a field name being typed, an operator after a known field, a value after an
// operator, or the start of a new term.

import type { IToken } from 'chevrotain';
import { FIELD_TYPE_LABELS, FIELDS, ORDERED_TYPES, findField, type FieldDef } from './catalog.js';
import { And, Identifier, LBracket, LParen, Not, Operator, Or, Quoted, RBracket, RParen, To, Value, tokenEnd } from './lexer.js';
import { scan } from './scan.js';

export type CompletionKind = 'field' | 'operator' | 'value' | 'keyword';

export interface Completion {
  readonly label: string;
  readonly kind: CompletionKind;
  /** The field's type, the operator's meaning, or the value's kind. */
  readonly detail: string;
  readonly documentation: string;
  /** The range of the query [from, to) that the label replaces. */
  readonly from: number;
  readonly to: number;
  /**
   * The text to put there when it is not the label: a field followed by `:` (when no operator
   * follows it already), so that accepting a field goes straight on to its value.
   */
  readonly insert?: string;
}

/** Where a value is being typed: its field, the operator before it, the text typed so far and the range it replaces. */
export interface ValuePosition {
  readonly field: FieldDef;
  readonly op: string;
  readonly prefix: string;
  readonly from: number;
  readonly to: number;
}

const WORD_END = /[\s()"[\]:<>=!]/;
const VALUE_END = /[\s()"]/;

function extend(text: string, from: number, stop: RegExp): number {
  let i = from;
  while (i < text.length && !stop.test(text[i]!)) i++;
  return i;
}

function fieldDetail(f: FieldDef): string {
  return `${FIELD_TYPE_LABELS[f.type]}${f.multi ? ', multi-valued' : ''}${f.tool !== null ? `, ${f.tool} only` : ''}`;
}

function fieldCompletions(prefix: string, from: number, to: number, text: string): Completion[] {
  const p = prefix.toLowerCase();
  const starts: Completion[] = [];
  const contains: Completion[] = [];
  // Accepting a field adds `:` unless an operator follows the replaced word already.
  const operatorFollows = /^[:<>]/.test(text.slice(to));
  for (const f of FIELDS) {
    const n = f.name.toLowerCase();
    const base: Completion = { label: f.name, kind: 'field', detail: fieldDetail(f), documentation: f.description, from, to };
    const c: Completion = operatorFollows ? base : { ...base, insert: `${f.name}:` };
    if (n.startsWith(p)) starts.push(c);
    else if (p.length > 0 && n.includes(p)) contains.push(c);
  }
  return [...starts, ...contains];
}

const KEYWORDS: Readonly<Record<string, string>> = {
  and: 'Both sides match (the same as a space).',
  or: 'Either side matches; binds weaker than and.',
  not: 'The following term does not match (the same as a leading -).',
};

function keywordCompletions(words: readonly string[], prefix: string, from: number, to: number): Completion[] {
  return words
    .filter((k) => k.startsWith(prefix.toLowerCase()))
    .map((k) => ({ label: k, kind: 'keyword' as const, detail: 'keyword', documentation: KEYWORDS[k]!, from, to }));
}

function operatorCompletions(f: FieldDef, at: number): Completion[] {
  const out: Completion[] = [
    {
      label: ':',
      kind: 'operator',
      detail: f.type === 'string' || f.type === 'keyValue' ? 'matches' : 'equals',
      documentation:
        f.type === 'string'
          ? 'Case-insensitive match of the whole value; * is a wildcard.'
          : f.type === 'keyValue'
            ? 'A custom value name=value; both sides may use * wildcards.'
            : f.type === 'boolean'
              ? 'true or false; * matches any known value.'
              : f.type === 'timestamp'
                ? 'The whole span of the value (a date: that day); [a to b] is an inclusive range.'
                : 'Equal to the value; [a to b] is an inclusive range.',
      from: at,
      to: at,
    },
  ];
  if (ORDERED_TYPES.has(f.type)) {
    const words = { '>': 'greater than', '>=': 'at least', '<': 'less than', '<=': 'at most' } as const;
    for (const [op, word] of Object.entries(words)) {
      out.push({ label: op, kind: 'operator', detail: word, documentation: `${FIELD_TYPE_LABELS[f.type]} ${word} the value.`, from: at, to: at });
    }
  }
  return out;
}

function valueCompletions(f: FieldDef, prefix: string, from: number, to: number, op = ':'): Completion[] {
  const out: { label: string; detail: string; documentation: string }[] = [];
  if (f.values !== undefined) for (const v of f.values) out.push({ label: v, detail: FIELD_TYPE_LABELS[f.type], documentation: `${f.name} is ${v}.` });
  if (f.acceptsNull) out.push({ label: 'null', detail: 'unknown', documentation: `${f.name} is not available.` });
  if (f.type === 'boolean') {
    out.push({ label: 'true', detail: 'Boolean', documentation: `${f.name} is true.` });
    out.push({ label: 'false', detail: 'Boolean', documentation: `${f.name} is false.` });
  }
  if (f.type === 'timestamp') {
    for (const [v, d] of [['-1h', 'an hour ago'], ['-1d', 'a day ago'], ['-7d', 'a week ago'], ['-30d', '30 days ago']] as const) {
      out.push({ label: v, detail: 'relative time', documentation: `Now minus a duration: ${d}.` });
    }
  }
  // Ordered types: what a value looks like, so that `buildDuration>` is not a dead end.
  for (const [v, d] of EXAMPLE_VALUES[f.type] ?? []) out.push({ label: v, detail: `${FIELD_TYPE_LABELS[f.type]} example`, documentation: d });
  if (op === ':' && ORDERED_TYPES.has(f.type) && f.type !== 'timestamp') {
    const [a, b] = (EXAMPLE_VALUES[f.type] ?? []).map(([v]) => v);
    if (a !== undefined && b !== undefined) out.push({ label: `[${a} to ${b}]`, detail: 'range', documentation: `From ${a} to ${b}, both included.` });
  }
  // After a comparison only values compare: `*` (known) goes with ':' alone.
  if (op === ':') out.push({ label: '*', detail: 'any known value', documentation: `${f.name} has a value.` });
  const p = prefix.toLowerCase();
  const starts = out.filter((v) => v.label.toLowerCase().startsWith(p));
  // A closed set with no value starting with the typed text (`buildTool:gr`): the values that
  // contain it, else all of them, rather than nothing.
  if (starts.length === 0 && f.values !== undefined && p !== '') {
    const closed = out.filter((v) => f.values!.includes(v.label));
    const contains = closed.filter((v) => v.label.includes(p));
    return (contains.length > 0 ? contains : closed).map((v) => ({ ...v, kind: 'value' as const, from, to }));
  }
  return starts.map((v) => ({ ...v, kind: 'value' as const, from, to }));
}

/** Example values of the ordered types (timestamps have their relative times above). */
const EXAMPLE_VALUES: Partial<Record<FieldDef['type'], readonly (readonly [string, string])[]>> = {
  duration: [
    ['30s', '30 seconds.'],
    ['1m', 'One minute.'],
    ['5m', 'Five minutes.'],
    ['1h', 'One hour.'],
  ],
  storageSize: [
    ['512mb', '512 megabytes (powers of 1000).'],
    ['2gib', '2 gibibytes (powers of 1024).'],
  ],
  number: [
    ['1', 'A number.'],
    ['8', 'A number.'],
  ],
};

/**
 * Where a value is being typed at `cursor` (right after an operator, or inside a value), if it
 * is: what a completion of values from the data needs (playground/src/value-completion.ts).
 */
export function valuePosition(text: string, cursor: number = text.length): ValuePosition | undefined {
  const at = Math.max(0, Math.min(cursor, text.length));
  const tokens = scan(text.slice(0, at)).tokens;
  const last: IToken | undefined = tokens[tokens.length - 1];
  if (last === undefined || tokenEnd(last) !== at) return undefined;
  const t = last.tokenType;
  if (t.CATEGORIES?.includes(Operator)) {
    const name = tokens[tokens.length - 2];
    const field = name?.tokenType === Identifier ? findField(name.image) : undefined;
    return field === undefined ? undefined : { field, op: last.image, prefix: '', from: at, to: extend(text, at, VALUE_END) };
  }
  if (t === Value || t === Quoted) {
    const op = tokens[tokens.length - 2];
    const name = tokens[tokens.length - 3];
    if (!op?.tokenType.CATEGORIES?.includes(Operator) || name?.tokenType !== Identifier) return undefined;
    const field = findField(name.image);
    if (field === undefined) return undefined;
    const quoted = t === Quoted;
    return { field, op: op.image, prefix: quoted ? last.image.slice(1) : last.image, from: last.startOffset, to: quoted ? tokenEnd(last) : extend(text, last.startOffset + 1, VALUE_END) };
  }
  return undefined;
}

/** Suggestions for the query `text` with the cursor at offset `cursor`. */
export function completeQuery(text: string, cursor: number = text.length): Completion[] {
  const at = Math.max(0, Math.min(cursor, text.length));
  const tokens = scan(text.slice(0, at)).tokens;
  const last: IToken | undefined = tokens[tokens.length - 1];
  const touching = last !== undefined && tokenEnd(last) === at;
  const before = touching ? tokens[tokens.length - 2] : last;

  if (last !== undefined && touching) {
    const t = last.tokenType;
    if (t === Identifier || t === And || t === Or || t === Not || t === To) {
      // A field name (or keyword) being typed: replace the whole word.
      const end = extend(text, last.startOffset, WORD_END);
      const exact = findField(last.image);
      const termStart = before === undefined || !isTermEnd(before);
      const keywords = keywordCompletions(termStart ? ['not'] : ['and', 'or', 'not'], last.image, last.startOffset, end);
      const fields = fieldCompletions(last.image, last.startOffset, end, text);
      // After a complete term, a word that starts a keyword is most likely that keyword (`user:bob o`).
      if (!termStart && exact === undefined) return [...keywords, ...fields];
      return [...(exact !== undefined ? operatorCompletions(exact, at) : []), ...fields, ...keywords];
    }
    if (t.CATEGORIES?.includes(Operator) || t === Value || t === Quoted) {
      const v = valuePosition(text, at);
      return v === undefined ? [] : valueCompletions(v.field, v.prefix, v.from, v.to, v.op);
    }
    if (t === LBracket) return [];
  }
  // Inside a range, after the lower bound: only `to` fits.
  if (last !== undefined && !touching && (last.tokenType === Value || last.tokenType === Quoted) && tokens[tokens.length - 2]?.tokenType === LBracket) {
    return [{ label: 'to', kind: 'keyword', detail: 'keyword', documentation: 'Separates the bounds of a range.', from: at, to: at }];
  }
  // The start of a new term.
  const end = extend(text, at, WORD_END);
  const afterTerm = last !== undefined && isTermEnd(last);
  // After a term inside a group that is still open, `)` closes it.
  const close: Completion[] =
    afterTerm && openGroups(tokens) > 0 && text[at] !== ')' ? [{ label: ')', kind: 'keyword', detail: 'closes the group', documentation: 'Ends the group opened by (.', from: at, to: at }] : [];
  return [...close, ...fieldCompletions('', at, end, text), ...keywordCompletions(afterTerm ? ['and', 'or', 'not'] : ['not'], '', at, end)];
}

/** Parentheses opened and not closed among `tokens`. */
function openGroups(tokens: readonly IToken[]): number {
  let open = 0;
  for (const t of tokens) {
    if (t.tokenType === LParen) open++;
    else if (t.tokenType === RParen && open > 0) open--;
  }
  return open;
}

function isTermEnd(t: IToken): boolean {
  const k = t.tokenType;
  return k === Identifier || k === Value || k === Quoted || k === RParen || k === RBracket;
}
