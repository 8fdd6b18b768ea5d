// The checked AST as a tree of nested lists. Each node is a button that selects its source text
// in the editor, so a person can see which part of the query became which node.

import { FIELD_TYPE_LABELS } from '../../src/query/catalog.js';
import type { CheckedExpr, Span } from '../../src/query/checked.js';
import { describePredicate } from '../../src/query/explain.js';
import { h } from '../../ui/dom.js';

function node(expr: CheckedExpr, select: (span: Span) => void): HTMLLIElement {
  const pick = (label: Node | string, kind: string) => {
    const b = h('button', { type: 'button', class: `ast-node ast-${kind}`, title: 'Select in the editor' }, label);
    b.addEventListener('click', () => select(expr.span));
    return b;
  };
  switch (expr.kind) {
    case 'all':
      return h('li', {}, pick('all builds (empty query)', 'all'));
    case 'and':
    case 'or':
      return h('li', {}, pick(expr.kind.toUpperCase(), expr.kind), h('ul', {}, ...expr.operands.map((o) => node(o, select))));
    case 'not':
      return h('li', {}, pick('NOT', 'not'), h('ul', {}, node(expr.operand, select)));
    case 'term': {
      const f = expr.field;
      const label = h(
        'span',
        {},
        h('code', { class: 'ast-field' }, f.name),
        ' ',
        h('span', { class: 'muted' }, `(${FIELD_TYPE_LABELS[f.type]}${f.multi ? ', multi-valued' : ''}${f.tool ? `, ${f.tool} only` : ''})`),
        ' ',
        describePredicate(expr.predicate),
      );
      return h('li', {}, pick(label, 'term'));
    }
  }
}

export function renderAst(container: HTMLElement, expr: CheckedExpr | undefined, select: (span: Span) => void): void {
  if (!expr) {
    container.replaceChildren(h('p', { class: 'muted' }, 'Fix the problems in the query to see its tree.'));
    return;
  }
  container.replaceChildren(h('ul', { class: 'ast-root', 'aria-label': 'Checked syntax tree' }, node(expr, select)));
}
