// Query complexity limits (limits.ts): a query with too many terms or too many wildcards without a
// literal prefix is refused with a `tooComplex` diagnostic that points at the first term over the
// limit, whatever else the query holds; at the limit it parses.

import { describe, expect, it } from 'vitest';
import { DEFAULT_QUERY_LIMITS, parseQuery } from '../../src/query/index.js';

const terms = (n: number, term = (i: number) => `-tag:t${i}`): string => Array.from({ length: n }, (_, i) => term(i)).join(' ');

describe('query complexity limits', () => {
  it('accepts the most terms allowed and refuses one more, pointing at the first term over the limit', () => {
    const max = DEFAULT_QUERY_LIMITS.maxTerms;
    expect(parseQuery(terms(max)).ok).toBe(true);
    const text = terms(max + 1);
    const r = parseQuery(text);
    expect(r.ok).toBe(false);
    expect(r.diagnostics).toHaveLength(1);
    const d = r.diagnostics[0]!;
    expect(d).toMatchObject({ code: 'tooComplex', start: text.indexOf(`tag:t${max}`), end: text.length, line: 1 });
    expect(d.message).toBe(`The query has ${max + 1} terms; at most ${max} are allowed. Use wildcards or fewer terms`);
  });

  it('counts terms anywhere: in groups, under negation, on both sides of or', () => {
    const text = `(${terms(60, (i) => `user:u${i}`)}) or -(${terms(60, (i) => `project:p${i}`)})`;
    expect(parseQuery(text).diagnostics.map((d) => d.code)).toEqual(['tooComplex']);
  });

  it('refuses about 1,000 negated terms (they took 40 s on SQLite, and gave a 500)', () => {
    const r = parseQuery(terms(980));
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['tooComplex']);
  });

  it('limits wildcards without a literal prefix, not prefixes, `*` or escaped stars', () => {
    const max = DEFAULT_QUERY_LIMITS.maxUnanchoredWildcards;
    const infix = terms(max, (i) => `requested:*x${i}*`);
    expect(parseQuery(infix).ok).toBe(true);
    // Prefix patterns, "known" and a literal star cost an index range at most.
    expect(parseQuery(`${infix} user:ab* tag:* project:\\*x* hostname:**`).ok).toBe(true);
    const text = `${infix} value:*name=x`;
    const r = parseQuery(text);
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ code: 'tooComplex', start: text.indexOf('*name=x'), end: text.length }),
    ]);
    expect(r.diagnostics[0]!.message).toMatch(/values starting with '\*'; at most 8/);
  });

  it('reports a limit next to the other problems of the query', () => {
    const r = parseQuery(`${terms(DEFAULT_QUERY_LIMITS.maxTerms)} buildOutcom:failed`);
    expect(r.diagnostics.map((d) => d.code).sort()).toEqual(['tooComplex', 'unknownField']);
  });

  it('takes other limits from the options', () => {
    expect(parseQuery('user:a user:b user:c', { limits: { maxTerms: 2, maxUnanchoredWildcards: 0 } }).diagnostics[0]).toMatchObject({
      code: 'tooComplex',
      start: 14,
    });
    expect(parseQuery('user:*a', { limits: { maxTerms: 2, maxUnanchoredWildcards: 0 } }).diagnostics[0]).toMatchObject({ code: 'tooComplex', start: 5, end: 7 });
  });
});
