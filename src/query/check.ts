// The checker: turns the syntax AST into the checked AST. Fields are resolved against the catalog
// (case-insensitively), values are parsed into typed values, operators are checked against the
// field's type. It also normalises: nested and/or are flattened, double negation removed, and
// parentheses disappear (the tree carries the grouping).
//
// It walks a partial tree too, so a query with a syntax error still gets its type errors
// reported; it returns an expression only when every part of the tree checked.

import { FIELD_TYPE_LABELS, FIELDS, ORDERED_TYPES, findField, type FieldDef } from './catalog.js';
import type { CheckedExpr, Predicate, Span, TypedValue } from './checked.js';
import type { DiagnosticInput } from './position.js';
import { closest } from './suggest.js';
import type { SyntaxExpr, SyntaxRange, SyntaxTerm, SyntaxWord } from './syntax.js';
import {
  firstUnescapedEquals,
  parseBoolean,
  parseDuration,
  parseNumber,
  parsePattern,
  parseStorageSize,
  parseTimestamp,
  patternMatches,
  type Parsed,
} from './values.js';

const FIELD_NAMES = FIELDS.map((f) => f.name);
/**
 * Exact-spelling lookup first (the common case), then the case-insensitive catalog lookup. The
 * exact one buckets the catalog by length and first character and compares: a name from the query
 * is a fresh string, and hashing it for a Map costs three times as much.
 */
const bucketOf = (name: string): number => name.length * 128 + (name.charCodeAt(0) & 127);
// Dense (filled with undefined first): a sparse array would fall back to a dictionary.
const BY_BUCKET: (FieldDef[] | undefined)[] = Array.from({ length: Math.max(...FIELDS.map((f) => bucketOf(f.name))) + 1 }, () => undefined);
for (const f of FIELDS) (BY_BUCKET[bucketOf(f.name)] ??= []).push(f);
function lookupField(name: string): FieldDef | undefined {
  const bucket = BY_BUCKET[bucketOf(name)];
  if (bucket !== undefined) for (const f of bucket) if (f.name === name) return f;
  return findField(name);
}
const ORDERED_LABELS = 'Duration, Timestamp, Number and Storage size';
const COMPARE_OPS = { ':': 'eq', '>': 'gt', '>=': 'ge', '<': 'lt', '<=': 'le' } as const;

const typeLabel = (f: FieldDef): string => FIELD_TYPE_LABELS[f.type];
/** `a String field`, `an Other field`: for messages only. */
const aTypeField = (f: FieldDef): string => `${/^[AEIOU]/.test(typeLabel(f)) ? 'an' : 'a'} ${typeLabel(f)} field`;

/** What a value of the field looks like, for `expected`. */
export function valueForms(f: FieldDef): string[] {
  switch (f.type) {
    case 'string':
      return f.values !== undefined ? [...f.values, ...(f.acceptsNull ? ['null'] : [])] : ['text', '"quoted text"', 'pattern with *'];
    case 'keyValue':
      return ['name=value', '"name=value"'];
    case 'duration':
      return ['1h30m', '250ms', 'PT1H30M'];
    case 'timestamp':
      return ['YYYY-MM-DD', 'YYYY-MM-DDTHH:MM', 'YYYY-MM-DDTHH:MM:SS', 'YYYY-MM-DDTHH:MM:SS.SSS', '-7d'];
    case 'boolean':
      return ['true', 'false'];
    case 'number':
      return ['integer', 'decimal'];
    case 'storageSize':
      return ['4096', '512mb', '2gib'];
  }
}

class Checker {
  readonly problems: DiagnosticInput[] = [];
  constructor(readonly now: number) {}

  private report(code: DiagnosticInput['code'], at: Span, message: string, expected: readonly string[], suggestion?: string): void {
    this.problems.push(suggestion === undefined ? { code, start: at.start, end: at.end, message, expected } : { code, start: at.start, end: at.end, message, expected, suggestion });
  }

  expr(node: SyntaxExpr): CheckedExpr | undefined {
    switch (node.kind) {
      case 'empty':
        return { kind: 'all', span: node.span };
      case 'group':
        return node.inner === undefined ? undefined : this.expr(node.inner);
      case 'not': {
        if (node.operand === undefined) return undefined;
        const operand = this.expr(node.operand);
        if (operand === undefined) return undefined;
        // `!` right before a term on a tool-specific field is itself a term of that tool
        // (search-semantics.md): the tool's builds the term does not match. It checks as the
        // idiom it stands for, `buildTool:<tool> -term`, so everything downstream sees only
        // complement. `-`/`not`, and `!` before a group, are set complement over all builds.
        if (node.prefix === '!' && node.operand.kind === 'term' && operand.kind === 'term' && operand.field.tool !== null) {
          return { kind: 'and', operands: [toolTerm(operand.field.tool, node.span), { kind: 'not', operand, span: node.span }], span: node.span };
        }
        // Negation is set complement, so `--a` is `a`.
        if (operand.kind === 'not') return operand.operand;
        return { kind: 'not', operand, span: node.span };
      }
      case 'and':
      case 'or': {
        const operands: CheckedExpr[] = [];
        let complete = true;
        for (const child of node.operands) {
          const c = this.expr(child);
          if (c === undefined) complete = false;
          else if (c.kind === node.kind) operands.push(...c.operands);
          else operands.push(c);
        }
        return complete ? { kind: node.kind, operands, span: node.span } : undefined;
      }
      case 'term':
        return this.term(node);
    }
  }

  private term(node: SyntaxTerm): CheckedExpr | undefined {
    const field = lookupField(node.field.name);
    if (field === undefined) {
      this.unknownField(node);
      return undefined;
    }
    const predicate = this.predicate(field, node);
    return predicate === undefined ? undefined : { kind: 'term', field, predicate, span: node.span };
  }

  private unknownField(node: SyntaxTerm): void {
    const name = node.field.name;
    let suggestion = closest(name, FIELD_NAMES);
    // A tool-specific field written without its tool prefix.
    const lower = `.${name.toLowerCase()}`;
    const suffixed = FIELD_NAMES.filter((f) => f.toLowerCase().endsWith(lower));
    suggestion ??= suffixed[0];
    const alternatives = suggestion !== undefined && suffixed.length > 1 ? suffixed : suggestion !== undefined ? [suggestion] : [];
    const hint = alternatives.length > 0 ? `; did you mean ${alternatives.map((a) => `'${a}'`).join(' or ')}?` : '';
    this.report('unknownField', node.field.span, `Unknown field '${name}'${hint}`, alternatives.length > 0 ? alternatives : ['a field name'], suggestion);
  }

  private predicate(field: FieldDef, node: SyntaxTerm): Predicate | undefined {
    if (node.operator === undefined) {
      if (field.type === 'boolean') return { kind: 'boolean', value: true };
      this.report(
        'invalidOperator',
        node.field.span,
        `'${field.name}' is ${aTypeField(field)}: a bare field name works only for Boolean fields; write ${field.name}:value`,
        [':'],
      );
      return undefined;
    }
    const { op, span: opSpan } = node.operator;
    const value = node.value;
    const ordered = ORDERED_TYPES.has(field.type);
    if (op !== ':' && !ordered) {
      this.report(
        'invalidOperator',
        opSpan,
        `'${op}' compares ordered values, but '${field.name}' is ${aTypeField(field)}; use ':'`,
        [':'],
      );
      return undefined;
    }
    if (value === undefined) return undefined; // reported by the parser
    if (value.kind === 'range') return this.range(field, op, opSpan, value);

    const text = value.text;
    if (text === '*') {
      if (op === ':') return { kind: 'known' };
      this.report('invalidValue', value.span, `'${op}' needs a value to compare with, not '*'`, valueForms(field));
      return undefined;
    }
    switch (field.type) {
      case 'string':
        return this.stringValue(field, value);
      case 'keyValue':
        return this.keyValue(value);
      case 'boolean': {
        const b = parseBoolean(text);
        if (b !== undefined) return { kind: 'boolean', value: b };
        const suggestion = closest(text, ['true', 'false']);
        this.report(
          'invalidValue',
          value.span,
          `'${text}' is not a Boolean; '${field.name}' takes true or false${suggestion !== undefined ? ` (did you mean '${suggestion}'?)` : ''}`,
          ['true', 'false', '*'],
          suggestion,
        );
        return undefined;
      }
      case 'duration':
      case 'timestamp':
      case 'number':
      case 'storageSize': {
        const typed = this.typedValue(field, value);
        return typed === undefined ? undefined : { kind: 'compare', op: COMPARE_OPS[op], value: typed };
      }
    }
  }

  private stringValue(field: FieldDef, value: SyntaxWord): Predicate | undefined {
    const text = value.text;
    if (field.acceptsNull && text.toLowerCase() === 'null') return { kind: 'unknown' };
    const pattern = parsePattern(text);
    if (field.values !== undefined) {
      const allowed = field.values;
      const fits = allowed.some((v) => patternMatches(pattern, v));
      if (!fits) {
        const expected = valueForms(field);
        // A tool's own name (`gradle` for `native`) first, then the closest spelling.
        const alias = field.valueAliases?.[text.toLowerCase()];
        const suggestion = alias ?? (pattern.segments.length === 1 ? closest(text, expected) : undefined);
        this.report(
          'invalidValue',
          value.span,
          `'${text}' is not a value of '${field.name}'; allowed: ${expected.join(', ')}${suggestion !== undefined ? ` (did you mean '${suggestion}'?)` : ''}`,
          expected,
          suggestion,
        );
        return undefined;
      }
    }
    return { kind: 'pattern', pattern };
  }

  private keyValue(value: SyntaxWord): Predicate | undefined {
    const text = value.text;
    const eq = firstUnescapedEquals(text);
    const nameText = eq < 0 ? text : text.slice(0, eq);
    if (nameText.length === 0) {
      this.report('invalidValue', value.span, `The custom value name before '=' is empty; write name=value (use * for any name)`, ['name=value']);
      return undefined;
    }
    return { kind: 'keyValue', name: parsePattern(nameText), value: parsePattern(eq < 0 ? '*' : text.slice(eq + 1)) };
  }

  private typedValue(field: FieldDef, word: SyntaxWord): TypedValue | undefined {
    const text = word.text;
    let parsed: Parsed<TypedValue>;
    switch (field.type) {
      case 'duration': {
        const d = text.startsWith('-') ? ({ ok: false, message: `A duration cannot be negative ('${text}')` } as const) : parseDuration(text);
        parsed = d.ok ? { ok: true, value: { type: 'duration', ms: d.value, text } } : d;
        break;
      }
      case 'timestamp':
        parsed = parseTimestamp(text, this.now);
        break;
      case 'number': {
        const n = parseNumber(text);
        parsed = n.ok ? { ok: true, value: { type: 'number', value: n.value, text } } : n;
        break;
      }
      case 'storageSize': {
        const s = parseStorageSize(text);
        parsed = s.ok ? { ok: true, value: { type: 'storageSize', bytes: s.value, text } } : s;
        break;
      }
      default:
        return undefined;
    }
    if (parsed.ok) return parsed.value;
    this.report('invalidValue', word.span, `${parsed.message} ('${field.name}' is ${aTypeField(field)})`, valueForms(field));
    return undefined;
  }

  private range(field: FieldDef, op: string, opSpan: Span, range: SyntaxRange): Predicate | undefined {
    if (!ORDERED_TYPES.has(field.type)) {
      this.report(
        'invalidOperator',
        range.span,
        `A range works only on ${ORDERED_LABELS} fields; '${field.name}' is ${aTypeField(field)}`,
        valueForms(field),
      );
      return undefined;
    }
    if (op !== ':') {
      this.report('invalidOperator', opSpan, `A range follows ':' (${field.name}:[from to to]), not '${op}'`, [':']);
      return undefined;
    }
    if (range.from === undefined || range.to === undefined) return undefined; // reported by the parser
    for (const bound of [range.from, range.to]) {
      if (bound.text === '*') {
        this.report('invalidValue', bound.span, `A range needs both bounds; for an open range use '>=' or '<='`, valueForms(field));
        return undefined;
      }
    }
    const from = this.typedValue(field, range.from);
    const to = this.typedValue(field, range.to);
    if (from === undefined || to === undefined) return undefined;
    if (ordinal(from) > ordinal(to)) {
      this.report(
        'invalidRange',
        range.span,
        `The range is inverted: '${range.from.text}' is greater than '${range.to.text}'; write the smaller bound first`,
        [`[${range.to.text} to ${range.from.text}]`],
      );
      return undefined;
    }
    return { kind: 'range', from, to };
  }
}

const BUILD_TOOL = findField('buildTool')!;

/** `buildTool:<tool>`: the builds of one tool. */
function toolTerm(tool: string, span: Span): CheckedExpr {
  return { kind: 'term', field: BUILD_TOOL, predicate: { kind: 'pattern', pattern: parsePattern(tool) }, span };
}

/** The number a typed value is ordered by. */
export function ordinal(v: TypedValue): number {
  switch (v.type) {
    case 'duration':
      return v.ms;
    case 'number':
      return v.value;
    case 'storageSize':
      return v.bytes;
    case 'timestamp':
      return v.instant;
  }
}

export function checkSyntax(syntax: SyntaxExpr, now: number): { expr: CheckedExpr | undefined; problems: DiagnosticInput[] } {
  const checker = new Checker(now);
  const expr = checker.expr(syntax);
  return { expr, problems: checker.problems };
}
