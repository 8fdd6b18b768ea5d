// Completion: what fits at a cursor position of a query. The text before the cursor is lexed (the
// same lexer as parsing, so a value context is recognised exactly as the parser sees it), and the
// last token decides: a field name being typed, an operator after a known field, a value after an
// operator, or the start of a new term.

import type { IToken } from 'chevrotain';
import { FIELD_TYPE_LABELS, FIELDS, ORDERED_TYPES, findField, type FieldDef } from './catalog.js';
import { And, Identifier, LBracket, Not, Operator, Or, Quoted, RBracket, RParen, To, Value, tokenEnd } from './lexer.js';
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

function fieldCompletions(prefix: string, from: number, to: number): Completion[] {
  const p = prefix.toLowerCase();
  const starts: Completion[] = [];
  const contains: Completion[] = [];
  for (const f of FIELDS) {
    const n = f.name.toLowerCase();
    const c: Completion = { label: f.name, kind: 'field', detail: fieldDetail(f), documentation: f.description, from, to };
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
  // After a comparison only values compare: `*` (known) goes with ':' alone.
  if (op === ':') out.push({ label: '*', detail: 'any known value', documentation: `${f.name} has a value.` });
  const p = prefix.toLowerCase();
  return out.filter((v) => v.label.startsWith(p)).map((v) => ({ ...v, kind: 'value' as const, from, to }));
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
      return [
        ...(exact !== undefined ? operatorCompletions(exact, at) : []),
        ...fieldCompletions(last.image, last.startOffset, end),
        ...keywordCompletions(termStart ? ['not'] : ['and', 'or', 'not'], last.image, last.startOffset, end),
      ];
    }
    if (t.CATEGORIES?.includes(Operator)) {
      const f = before?.tokenType === Identifier ? findField(before.image) : undefined;
      return f !== undefined ? valueCompletions(f, '', at, at, last.image) : [];
    }
    if (t === Value || t === Quoted) {
      const op = before;
      const name = tokens[tokens.length - 3];
      if (op?.tokenType.CATEGORIES?.includes(Operator) && name?.tokenType === Identifier) {
        const f = findField(name.image);
        if (f === undefined) return [];
        const end = extend(text, last.startOffset + 1, VALUE_END);
        return valueCompletions(f, t === Quoted ? last.image.slice(1) : last.image, last.startOffset, t === Quoted ? tokenEnd(last) : end, op.image);
      }
      return [];
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
  return [...fieldCompletions('', at, end), ...keywordCompletions(afterTerm ? ['and', 'or', 'not'] : ['not'], '', at, end)];
}

function isTermEnd(t: IToken): boolean {
  const k = t.tokenType;
  return k === Identifier || k === Value || k === Quoted || k === RParen || k === RBracket;
}
