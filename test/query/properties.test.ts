import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completeQuery, explainText, formatDiagnostic, formatQuery, parseQuery, type CheckedExpr } from '../../src/query/index.js';
import { anyQueryText, checkedExpr, nearValidQuery, validQuery } from '../../src/testing/index.js';
import { nnf, stripSpans } from './helpers.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const parse = (q: string) => parseQuery(q, { now: NOW });

function meaning(q: string): unknown {
  const r = parse(q);
  if (!r.ok) throw new Error(`${JSON.stringify(q)}: ${r.diagnostics.map((d) => d.message).join('; ')}`);
  return stripSpans(r.expr!);
}

describe('properties of the search language', { timeout: 180_000 }, () => {
  it('any generated checked AST survives format -> parse unchanged', () => {
    fc.assert(
      fc.property(checkedExpr({ now: NOW }), (expr) => {
        const text = formatQuery(expr);
        const r = parse(text);
        expect(r.diagnostics, text).toEqual([]);
        expect(stripSpans(r.expr!)).toEqual(stripSpans(expr));
      }),
      { numRuns: 400 },
    );
  });

  it('every surface spelling of a valid query checks to the same AST as its canonical form', () => {
    fc.assert(
      fc.property(validQuery({ now: NOW }), (text) => {
        const r = parse(text);
        expect(r.diagnostics, text).toEqual([]);
        expect(meaning(formatQuery(r.expr!))).toEqual(stripSpans(r.expr!));
      }),
      { numRuns: 300 },
    );
  });

  it('the parser never throws, and every diagnostic lies inside the input with a consistent line and column', () => {
    fc.assert(
      fc.property(fc.oneof(anyQueryText(), fc.string({ unit: 'grapheme' })), (text) => {
        const r = parse(text);
        expect(r.ok).toBe(r.diagnostics.length === 0);
        expect(r.ok).toBe(r.expr !== undefined);
        for (const d of r.diagnostics) {
          expect(d.start).toBeGreaterThanOrEqual(0);
          expect(d.end).toBeGreaterThanOrEqual(d.start);
          expect(d.end).toBeLessThanOrEqual(text.length);
          const before = text.slice(0, d.start).split(/\r\n|\r|\n/);
          expect(d.line).toBe(before.length);
          expect(d.column).toBe(before[before.length - 1]!.length + 1);
          expect(d.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 700 },
    );
  });

  it('completion, code frames and explain never throw; completion ranges lie inside the text', () => {
    fc.assert(
      fc.property(anyQueryText(), fc.nat(), (text, n) => {
        const cursor = n % (text.length + 1);
        for (const c of completeQuery(text, cursor)) {
          expect(c.from).toBeGreaterThanOrEqual(0);
          expect(c.from).toBeLessThanOrEqual(c.to);
          expect(c.to).toBeLessThanOrEqual(text.length);
          expect(c.label.length).toBeGreaterThan(0);
        }
        for (const d of parseQuery(text).diagnostics) expect(formatDiagnostic(text, d)).toContain('^');
        expect(typeof explainText(text).output).toBe('string');
      }),
      { numRuns: 300 },
    );
  });

  it('near-valid queries are either valid or reported, never thrown', () => {
    fc.assert(
      fc.property(nearValidQuery({ now: NOW }), (text) => {
        const r = parse(text);
        expect(r.ok || r.diagnostics.length > 0).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('`a b` means `a and b`', () => {
    fc.assert(
      fc.property(validQuery({ now: NOW, depth: 2 }), validQuery({ now: NOW, depth: 2 }), (a, b) => {
        fc.pre(a.trim() !== '' && b.trim() !== '');
        expect(meaning(`(${a}) (${b})`)).toEqual(meaning(`(${a}) and (${b})`));
        expect(meaning(`(${a}) (${b})`)).toEqual(meaning(`(${a}) AND (${b})`));
      }),
      { numRuns: 200 },
    );
  });

  it('double negation disappears in the checked AST', () => {
    fc.assert(
      fc.property(validQuery({ now: NOW, depth: 2 }), (a) => {
        fc.pre(a.trim() !== '');
        expect(meaning(`-(-(${a}))`)).toEqual(meaning(a));
        expect(meaning(`not not (${a})`)).toEqual(meaning(a));
        expect(meaning(`!-(${a})`)).toEqual(meaning(a));
      }),
      { numRuns: 200 },
    );
  });

  it("De Morgan's laws: both sides have the same negation normal form", () => {
    fc.assert(
      fc.property(validQuery({ now: NOW, depth: 2 }), validQuery({ now: NOW, depth: 2 }), (a, b) => {
        fc.pre(a.trim() !== '' && b.trim() !== '');
        const nf = (q: string) => nnf(parse(q).expr as CheckedExpr);
        expect(nf(`-((${a}) or (${b}))`)).toEqual(nf(`-(${a}) -(${b})`));
        expect(nf(`-((${a}) (${b}))`)).toEqual(nf(`-(${a}) or -(${b})`));
      }),
      { numRuns: 200 },
    );
  });
});
