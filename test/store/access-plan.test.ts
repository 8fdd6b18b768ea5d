// The compiler's access plan (src/sql/access.ts) and the posting planner that consumes it
// (src/store/search/postings.ts): for each access kind, the plan says what the compiled SQL does, and the
// planner decides from the plan alone, on random queries and on a real SQLite store.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findField } from '../../src/query/catalog.js';
import type { CheckedExpr, Pattern, Predicate } from '../../src/query/checked.js';
import { parseQuery } from '../../src/query/index.js';
import { accessPlan, explainSql, type AccessPlan, type TermAccess, type TermAccessKind } from '../../src/sql/index.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { PostingCache, exactTerms } from '../../src/store/search/postings.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import { query as randomQuery, term as randomTerm } from '../sql/support/arbitraries.js';

const NOW = Date.UTC(2026, 0, 15);
const SPAN = { start: 0, end: 0 };
const pat = (...segments: string[]): Pattern => ({ segments, text: segments.join('*') });
const term = (name: string, predicate: Predicate): CheckedExpr => ({ kind: 'term', field: findField(name)!, predicate, span: SPAN });
const not = (operand: CheckedExpr): CheckedExpr => ({ kind: 'not', operand, span: SPAN });
const and = (...operands: CheckedExpr[]): CheckedExpr => ({ kind: 'and', operands, span: SPAN });

/**
 * One term per access kind (SQLite), the kind the compiler gives it, and what the posting planner
 * must do with it next to two exact terms: a bitmap of its own, the rest of the query checked by
 * SQL on each candidate, or no bitmaps at all (SQL alone: a list would be collected per chunk).
 */
const EXAMPLES: readonly { name: string; expr: CheckedExpr; kind: TermAccessKind; planner: 'bitmap' | 'rest' | 'sql' }[] = [
  { name: 'a String equality', expr: term('user', { kind: 'pattern', pattern: pat('farah') }), kind: 'rowEquals', planner: 'bitmap' },
  { name: 'a boolean', expr: term('hasVerificationFailure', { kind: 'boolean', value: true }), kind: 'rowEquals', planner: 'bitmap' },
  { name: 'a prefix', expr: term('user', { kind: 'pattern', pattern: pat('far', '') }), kind: 'row', planner: 'rest' },
  { name: 'a range', expr: term('buildDuration', { kind: 'compare', op: 'gt', value: { type: 'duration', ms: 1000, text: '1s' } }), kind: 'row', planner: 'rest' },
  { name: 'an infix too short for trigrams', expr: term('user', { kind: 'pattern', pattern: pat('', 'ar', '') }), kind: 'row', planner: 'rest' },
  { name: 'an infix on a column without a trigram table', expr: term('buildOutcome', { kind: 'pattern', pattern: pat('', 'ucce', '') }), kind: 'row', planner: 'rest' },
  { name: 'an infix on a trigram column', expr: term('user', { kind: 'pattern', pattern: pat('', 'ara', '') }), kind: 'trigram', planner: 'sql' },
  { name: 'a multi-valued exact value', expr: term('tag', { kind: 'pattern', pattern: pat('release') }), kind: 'childList', planner: 'bitmap' },
  { name: 'a multi-valued infix (through its terms)', expr: term('requested', { kind: 'pattern', pattern: pat('', 'uil', '') }), kind: 'childList', planner: 'sql' },
  { name: 'a custom value', expr: term('value', { kind: 'keyValue', name: pat('branch'), value: pat('main') }), kind: 'childList', planner: 'sql' },
  { name: 'a custom value under any name (the walk over the names)', expr: term('value', { kind: 'keyValue', name: pat('', ''), value: pat('main') }), kind: 'childList', planner: 'sql' },
  { name: 'a negated multi-valued exact value', expr: not(term('tag', { kind: 'pattern', pattern: pat('release') })), kind: 'childProbe', planner: 'rest' },
  { name: 'a negated custom value', expr: not(term('value', { kind: 'keyValue', name: pat('branch'), value: pat('main') })), kind: 'childProbe', planner: 'rest' },
];

const firstTerm = (e: CheckedExpr): CheckedExpr => (e.kind === 'not' ? firstTerm(e.operand) : e);

/**
 * What the compiled SQL of a lone term shows of its access path: a list of builds collected first
 * (`builds.seq IN (SELECT …)`, from child rows or a trigram table), a per-build probe (EXISTS), or
 * a test of the row.
 */
function sqlShape(expr: CheckedExpr, dialect: 'sqlite' | 'postgres' = 'sqlite'): 'list' | 'probe' | 'row' {
  const { sql } = explainSql(expr, dialect);
  if (sql.includes('builds.seq IN (SELECT')) return 'list';
  if (sql.includes('EXISTS (SELECT')) return 'probe';
  return 'row';
}

const shapeOf = (a: TermAccess): 'list' | 'probe' | 'row' =>
  a.kind === 'childList' || a.kind === 'trigram' ? 'list' : a.kind === 'childProbe' ? 'probe' : 'row';

describe('the access plan is what the compiler does', () => {
  for (const ex of EXAMPLES) {
    it(`${ex.name}: ${ex.kind}`, () => {
      const plan = accessPlan(ex.expr, 'sqlite');
      expect(plan.terms).toHaveLength(1);
      const access = plan.accessOf(firstTerm(ex.expr))!;
      expect(access.kind).toBe(ex.kind);
      expect(sqlShape(ex.expr)).toBe(shapeOf(access));
    });
  }

  it('names trigram candidates only where the compiled SQL asks the trigram table', () => {
    for (const ex of EXAMPLES) {
      const usesTable = explainSql(ex.expr, 'sqlite').sql.includes('"builds_trigram" MATCH');
      expect(usesTable, ex.name).toBe(accessPlan(ex.expr, 'sqlite').terms[0]!.access.kind === 'trigram');
    }
  });

  it('PostgreSQL leaves infix patterns to its planner: no trigram access', () => {
    const infix = EXAMPLES.find((e) => e.kind === 'trigram')!;
    expect(accessPlan(infix.expr, 'postgres').terms[0]!.access.kind).toBe('row');
    expect(explainSql(infix.expr, 'postgres').sql).not.toContain('IN (SELECT');
  });

  it('agrees with the compiled SQL for every random term, negated or not, on both dialects', () => {
    fc.assert(
      fc.property(randomTerm, fc.boolean(), fc.constantFrom('sqlite' as const, 'postgres' as const), (t, negate, dialect) => {
        const e = negate ? not(t) : t;
        const access = accessPlan(e, dialect).accessOf(t)!;
        expect(sqlShape(e, dialect)).toBe(shapeOf(access));
      }),
      { numRuns: 2000 },
    );
  });

  it('lists every term of a query once, negated under an odd number of NOTs', () => {
    fc.assert(
      fc.property(randomQuery, (q) => {
        const plan = accessPlan(q, 'sqlite');
        const count = (e: CheckedExpr): number =>
          e.kind === 'term' ? 1 : e.kind === 'not' ? count(e.operand) : e.kind === 'all' ? 0 : e.operands.reduce((n, o) => n + count(o), 0);
        expect(plan.terms).toHaveLength(count(q));
        for (const t of plan.terms) expect(plan.accessOf(t.term)).toBe(t.access);
      }),
    );
  });
});

describe('the posting planner follows the plan', () => {
  const project = term('project', { kind: 'pattern', pattern: pat('billing') });
  const user = term('user', { kind: 'pattern', pattern: pat('farah') });

  for (const ex of EXAMPLES) {
    it(`${ex.name} (${ex.kind}) next to two exact terms: ${ex.planner}`, () => {
      const q = and(project, user, ex.expr);
      const split = exactTerms(q, accessPlan(q, 'sqlite'));
      switch (ex.planner) {
        case 'bitmap':
          expect(split!.exact.map((e) => e.term)).toEqual([project, user, ex.expr]);
          expect(split!.rest).toBeUndefined();
          return;
        case 'rest':
          expect(split!.exact.map((e) => e.term)).toEqual([project, user]);
          expect(split!.rest).toBe(ex.expr);
          return;
        case 'sql':
          expect(split).toBeUndefined();
          return;
      }
    });
  }

  it('decides from the plan, not from the query: another plan, another decision', () => {
    const q = and(project, user, term('tag', { kind: 'pattern', pattern: pat('release') }));
    const real = accessPlan(q, 'sqlite');
    expect(exactTerms(q, real)!.exact).toHaveLength(3);
    const replace = (kind: TermAccess): AccessPlan => ({ ...real, accessOf: (t) => (t === user ? kind : real.accessOf(t)) });
    // The same query, with the user term planned as a trigram list: no bitmaps at all.
    expect(exactTerms(q, replace({ kind: 'trigram' }))).toBeUndefined();
    // ...as a row test: two bitmaps, the user term checked by SQL.
    const split = exactTerms(q, replace({ kind: 'row' }))!;
    expect(split.exact.map((e) => e.term)).toEqual([project, q.kind === 'and' ? q.operands[2] : undefined]);
    expect(split.rest).toBe(user);
  });

  it('a doubly negated child term is a list, as compiled, not a probe', () => {
    const tag = term('tag', { kind: 'pattern', pattern: pat('release') });
    const twice = not(not(tag));
    const q = and(project, user, twice);
    const plan = accessPlan(q, 'sqlite');
    expect(plan.accessOf(tag)).toEqual({ kind: 'childList', via: 'index', value: 'release' });
    expect(sqlShape(twice)).toBe('list');
    // Its list would be collected for every chunk of candidates: SQL alone answers the page.
    expect(exactTerms(q, plan)).toBeUndefined();
  });

  it('every split of a random query agrees with its plan', () => {
    fc.assert(
      fc.property(fc.array(randomQuery, { minLength: 1, maxLength: 4 }), (parts) => {
        const q = parts.length === 1 ? parts[0]! : and(...parts);
        const plan = accessPlan(q, 'sqlite');
        const split = exactTerms(q, plan);
        if (split === undefined) return;
        for (const { term: t } of split.exact) expect(['rowEquals', 'childList']).toContain(plan.accessOf(t)!.kind);
        const restTerms = plan.terms.filter((p) => !split.exact.some((x) => x.term === p.term));
        // ...and the rest is checked per candidate: no list is collected first.
        for (const p of restTerms) expect(shapeOf(p.access), p.term.field.name).not.toBe('list');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('a SQLite store pages through bitmaps exactly when the plan allows (one query per access kind)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let fast: BuildStore;
  let plain: BuildStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'access-plan-'));
    handle = await openDatabase({ data: dir });
    // Without the analytics index, whose matches a listing takes before any posting bitmap.
    fast = await openBuildStore(handle, { clock: () => NOW, searchThreads: 0, analyticsIndex: false });
    plain = await openBuildStore(handle, { clock: () => NOW, postings: false, searchThreads: 0, analyticsIndex: false });
    await fast.ingestNdjson([...demoBuilds({ builds: 200, seed: 5, now: NOW })].join('\n'));
  }, 120_000);
  afterAll(async () => {
    await fast?.close();
    await plain?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const queries: readonly [string, TermAccessKind][] = [
    ['buildOutcome:succeeded buildTool:native tag:ci', 'childList'],
    ['buildOutcome:succeeded buildTool:native buildDuration>1s', 'row'],
    ['buildOutcome:succeeded buildTool:native user:*ara*', 'trigram'],
    ['buildOutcome:succeeded buildTool:native -tag:ci', 'childProbe'],
    ['buildOutcome:succeeded buildTool:native hasVerificationFailure:false', 'rowEquals'],
  ];
  for (const [text, kind] of queries) {
    it(`${text} (${kind})`, async () => {
      const q = parseQuery(text, { now: NOW }).expr!;
      const plan = accessPlan(q, 'sqlite');
      const last = plan.terms.at(-1)!;
      expect(last.access.kind).toBe(kind);
      const used = vi.spyOn(PostingCache.prototype, 'postings');
      try {
        const options = { query: q, visibility: SEE_EVERYTHING, maxBuilds: 10 };
        const ids = (await fast.listBuilds(options)).map((b) => b.id);
        expect(ids.length).toBeGreaterThan(0);
        expect(ids).toEqual((await plain.listBuilds(options)).map((b) => b.id));
        // Bitmaps are used exactly when the planner, reading the plan, split the query.
        expect(used.mock.calls.length > 0).toBe(exactTerms(q, plan) !== undefined);
        expect(used.mock.calls.length > 0).toBe(kind !== 'trigram');
      } finally {
        used.mockRestore();
      }
    });
  }
});
