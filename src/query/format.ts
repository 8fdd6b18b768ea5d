// The canonical printer: one spelling per checked AST, and parseQuery(formatQuery(e)) gives e back
// (spans aside). Fields print with their catalog spelling, values as written (quoted only when
// they must be), `-` for negation, `or` spelled out, and parentheses only where precedence needs them.

import type { CheckedExpr, Predicate, TypedValue } from './checked.js';

const OPS = { eq: ':', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** Whether a value must be quoted to lex back as the same text (`inRange`: it stands in `[a to b]`). */
function needsQuotes(text: string, inRange: boolean): boolean {
  if (text.length === 0 || text[0] === '[') return true;
  if (inRange && /^to$/i.test(text)) return true;
  return inRange ? /[\s()"\]]/.test(text) : /[\s()"]/.test(text);
}

export function quoteValue(text: string, inRange = false): string {
  return needsQuotes(text, inRange) ? `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : text;
}

function typed(v: TypedValue, inRange: boolean): string {
  return quoteValue(v.text, inRange);
}

export function formatPredicate(p: Predicate): { op: string; value: string } | { op: ''; value: '' } {
  switch (p.kind) {
    case 'known':
      return { op: ':', value: '*' };
    case 'unknown':
      return { op: ':', value: 'null' };
    case 'boolean':
      return { op: ':', value: String(p.value) };
    case 'pattern':
      return { op: ':', value: quoteValue(p.pattern.text) };
    case 'keyValue':
      return { op: ':', value: quoteValue(`${p.name.text}=${p.value.text}`) };
    case 'compare':
      return { op: OPS[p.op], value: typed(p.value, false) };
    case 'range':
      return { op: ':', value: `[${typed(p.from, true)} to ${typed(p.to, true)}]` };
  }
}

export function formatQuery(expr: CheckedExpr): string {
  switch (expr.kind) {
    case 'all':
      return '';
    case 'and':
      return expr.operands.map((o) => (o.kind === 'or' ? `(${formatQuery(o)})` : formatQuery(o))).join(' ');
    case 'or':
      return expr.operands.map((o) => formatQuery(o)).join(' or ');
    case 'not':
      return expr.operand.kind === 'term' ? `-${formatQuery(expr.operand)}` : `-(${formatQuery(expr.operand)})`;
    case 'term': {
      const { op, value } = formatPredicate(expr.predicate);
      return `${expr.field.name}${op}${value}`;
    }
  }
}
