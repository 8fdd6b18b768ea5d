// The largest queries the complexity limits allow compile to SQL that both databases accept (about
// 1,000 terms once gave SQLite's "Expression tree is too large", a 500), and give the reference
// evaluator's answer.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUERY_LIMITS, parseQuery } from '../../src/query/index.js';
import { MAX_NESTING } from '../../src/query/parser.js';
import { evaluate } from '../../src/query/evaluate.js';
import { pgAvailable } from '../support/postgres.js';
import { insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';

const N = DEFAULT_QUERY_LIMITS.maxTerms;
const W = DEFAULT_QUERY_LIMITS.maxUnanchoredWildcards;
const list = (n: number, term: (i: number) => string, sep = ' '): string => Array.from({ length: n }, (_, i) => term(i)).join(sep);

/** Queries at the limits, in the shapes that make the deepest SQL. */
const LARGEST: readonly string[] = [
  list(N, (i) => `-tag:t${i}`),
  list(N, (i) => `-user:u${i}`, ' or '),
  list(N, (i) => `-value:"k${i}=v"`),
  `${list(W, (i) => `-requested:*r${i}*`)} ${list(N - W, (i) => `-native.requestedTasks:x${i}`)}`,
  // Nesting at its limit (negations and parentheses), with the remaining terms inside.
  `${'-('.repeat(MAX_NESTING / 2 - 1)}${list(N / 2, (i) => `(tag:a${i} or -user:b${i})`, ' ')}${')'.repeat(MAX_NESTING / 2 - 1)}`,
  `${'('.repeat(MAX_NESTING - 1)}${list(N / 2, (i) => `!native.buildCache.remote.enabled or project:p${i}`, ' ')}${')'.repeat(MAX_NESTING - 1)}`,
];

const BUILDS: TestBuild[] = Array.from({ length: 12 }, (_, i) => ({
  id: `b${i}`,
  toolType: i % 2 ? 'native' : 'jsbuild',
  attributes: {
    buildTool: i % 2 ? 'native' : 'jsbuild',
    user: `u${i}`,
    project: `p${i % 3}`,
    tag: [`t${i}`, `a${i}`],
    requested: [`r${i}x`],
    value: [{ name: `k${i}`, value: 'v' }],
    ...(i % 2 ? { 'native.requestedTasks': [`x${i}`], 'native.buildCache.remote.enabled': i % 3 === 0 } : {}),
  },
}));

const dialects = pgAvailable() ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(dialects)('the largest allowed queries on %s', (dialect) => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb(dialect);
    await insertBuilds(db.handle, BUILDS);
  }, 60_000);
  afterAll(async () => db?.close());

  it.each(LARGEST.map((q, i) => [i, q] as const))('shape %i runs and agrees with the evaluator', async (_i, text) => {
    const r = parseQuery(text);
    expect(r.diagnostics).toEqual([]);
    const want = BUILDS.filter((b) => evaluate(r.expr!, b)).map((b) => b.id).sort();
    expect(await searchIds(db.handle, r.expr!)).toEqual(want);
  });
});
