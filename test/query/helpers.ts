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

/** Negation normal form (negations pushed to the terms by De Morgan), flattened, without spans. */
export function nnf(e: CheckedExpr, negated = false): unknown {
  switch (e.kind) {
    case 'all':
      return negated ? { kind: 'not', operand: { kind: 'all' } } : { kind: 'all' };
    case 'not':
      return nnf(e.operand, !negated);
    case 'and':
    case 'or': {
      const kind = (e.kind === 'and') !== negated ? 'and' : 'or';
      const operands = e.operands.map((o) => nnf(o, negated)).flatMap((o) => ((o as { kind: string }).kind === kind ? (o as { operands: unknown[] }).operands : [o]));
      return { kind, operands };
    }
    case 'term':
      return negated ? { kind: 'not', operand: stripSpans(e) } : stripSpans(e);
  }
}
