import type { CheckedExpr } from '../../src/query/index.js';

/** The checked AST without spans and with fields by name: what equality of meaning compares. */
export function stripSpans(e: CheckedExpr): unknown {
  switch (e.kind) {
    case 'all':
      return { kind: 'all' };
    case 'and':
    case 'or':
      return { kind: e.kind, operands: e.operands.map(stripSpans) };
    case 'not':
      return { kind: 'not', operand: stripSpans(e.operand) };
    case 'term':
      return { kind: 'term', field: e.field.name, predicate: e.predicate };
  }
}
