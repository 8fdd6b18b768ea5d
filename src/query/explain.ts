// explainText: what the `explain` command prints. A valid query shows its canonical form and its
// checked AST as an indented tree with resolved values; a faulty one shows every diagnostic with
// a code frame.

import { FIELD_TYPE_LABELS } from './catalog.js';
import type { CheckedExpr, Predicate, TypedValue } from './checked.js';
import { formatQuery } from './format.js';
import { formatDiagnostic } from './frame.js';
import { parseQuery, type ParseOptions } from './parse.js';

function describeValue(v: TypedValue): string {
  switch (v.type) {
    case 'duration':
      return `${v.ms} ms (${v.text})`;
    case 'number':
      return `${v.value}`;
    case 'storageSize':
      return `${v.bytes} bytes (${v.text})`;
    case 'timestamp':
      return `${new Date(v.instant).toISOString()} (${v.text}${v.relativeMs !== undefined ? ', relative' : `, ${v.precision}`})`;
  }
}

const OP_WORDS = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** A predicate in words, with its values resolved (also shown by the playground's AST view). */
export function describePredicate(p: Predicate): string {
  switch (p.kind) {
    case 'known':
      return 'is known';
    case 'unknown':
      return 'is unknown';
    case 'boolean':
      return `is ${p.value}`;
    case 'pattern':
      return `matches ${JSON.stringify(p.pattern.text)}${p.pattern.segments.length > 1 ? ' (wildcard)' : ''}`;
    case 'keyValue':
      return `has a value named ${JSON.stringify(p.name.text)} with value ${JSON.stringify(p.value.text)}`;
    case 'compare':
      if (p.op === 'eq' && p.value.type === 'timestamp' && p.value.spanMs > 1) {
        return `within [${new Date(p.value.instant).toISOString()}, ${new Date(p.value.instant + p.value.spanMs).toISOString()}) (${p.value.text})`;
      }
      return `${OP_WORDS[p.op]} ${describeValue(p.value)}`;
    case 'range':
      if (p.from.type === 'timestamp' && p.to.type === 'timestamp') {
        return `within [${new Date(p.from.instant).toISOString()}, ${new Date(p.to.instant + p.to.spanMs).toISOString()}) (${p.from.text} to ${p.to.text})`;
      }
      return `from ${describeValue(p.from)} to ${describeValue(p.to)}, inclusive`;
  }
}

export function explainTree(expr: CheckedExpr, indent = ''): string[] {
  switch (expr.kind) {
    case 'all':
      return [`${indent}all builds`];
    case 'and':
    case 'or':
      return [`${indent}${expr.kind}`, ...expr.operands.flatMap((o) => explainTree(o, `${indent}  `))];
    case 'not':
      return [`${indent}not`, ...explainTree(expr.operand, `${indent}  `)];
    case 'term': {
      const f = expr.field;
      const tags = [FIELD_TYPE_LABELS[f.type], ...(f.multi ? ['multi-valued'] : []), ...(f.tool !== null ? [`${f.tool} builds only`] : [])];
      return [`${indent}${f.name} [${tags.join(', ')}] ${describePredicate(expr.predicate)}`];
    }
  }
}

export function explainText(text: string, options: ParseOptions = {}): { ok: boolean; output: string } {
  const r = parseQuery(text, options);
  if (r.ok && r.expr !== undefined) {
    return { ok: true, output: [`query: ${formatQuery(r.expr)}`, ...explainTree(r.expr)].join('\n') };
  }
  const n = r.diagnostics.length;
  return {
    ok: false,
    output: [...r.diagnostics.map((d) => formatDiagnostic(text, d)), `${n} problem${n === 1 ? '' : 's'} found`].join('\n\n'),
  };
}
