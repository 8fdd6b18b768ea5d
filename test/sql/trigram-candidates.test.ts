// The SQLite trigram tables keep no positions (search migration 0005, `detail=none`): the compiler
// asks them for the rows holding every trigram of an infix literal, in any column and in any
// order, and the LIKE on the real column decides. These tests give it literals whose trigrams
// occur elsewhere in the row or apart (candidates the LIKE must reject) and literals FTS5 could
// choke on (quotes, `*`, `:`, `^`, NUL, non-BMP characters, lone surrogates, upper case), and
// check that the answer is always the LIKE's own, never an error.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findField } from '../../src/query/catalog.js';
import type { CheckedExpr, Pattern } from '../../src/query/checked.js';
import { evaluate } from '../../src/query/evaluate.js';
import { explainSql } from '../../src/sql/index.js';
import { ftsTrigrams, likePattern, MAX_TRIGRAMS } from '../../src/sql/pattern.js';
import { clearBuilds, insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';

const SPAN = { start: 0, end: 0 };
const infix = (literal: string): Pattern => ({ segments: ['', literal.toLowerCase(), ''], text: `*${literal}*` });
const ANY: Pattern = { segments: ['', ''], text: '*' };

function stringTerm(field: 'user' | 'hostname' | 'project', literal: string): CheckedExpr {
  return { kind: 'term', field: findField(field)!, predicate: { kind: 'pattern', pattern: infix(literal) }, span: SPAN };
}
function customTerm(side: 'name' | 'value', literal: string): CheckedExpr {
  const predicate = side === 'name' ? { kind: 'keyValue' as const, name: infix(literal), value: ANY } : { kind: 'keyValue' as const, name: ANY, value: infix(literal) };
  return { kind: 'term', field: findField('value')!, predicate, span: SPAN };
}

function build(id: string, user: string, hostname: string, project: string, custom: readonly [string, string][]): TestBuild {
  return {
    id,
    toolType: 'native',
    attributes: { buildTool: 'native', user, hostname, project, buildStartTime: Date.UTC(2024, 0, 1), value: custom.map(([name, value]) => ({ name, value })) },
  };
}

/** The builds whose column (or a custom value's name/value) holds the literal by SQLite's LIKE alone, no trigram table. */
function likeAlone(db: SearchDb, where: string, literal: string): string[] {
  const sqlText = `SELECT id FROM builds WHERE seq IS NOT NULL AND ${where} LIKE ? ESCAPE '\\' ORDER BY id`;
  return db.handle.sqlite!.prepare(sqlText).pluck().all(`%${likePattern([literal.toLowerCase()])}%`) as string[];
}
const customLike = (side: 'name' | 'value'): string => `EXISTS (SELECT 1 FROM build_custom_values c WHERE c.seq = builds.seq AND c.${side} LIKE ? ESCAPE '\\')`;
function likeAloneCustom(db: SearchDb, side: 'name' | 'value', literal: string): string[] {
  const sqlText = `SELECT id FROM builds WHERE seq IS NOT NULL AND ${customLike(side)} ORDER BY id`;
  return db.handle.sqlite!.prepare(sqlText).pluck().all(`%${likePattern([literal.toLowerCase()])}%`) as string[];
}

describe('ftsTrigrams', () => {
  it('is the AND of the distinct trigrams, each a quoted string with its quotes doubled', () => {
    expect(ftsTrigrams('abcd')).toBe('"abc" AND "bcd"');
    expect(ftsTrigrams('aaaaa')).toBe('"aaa"');
    expect(ftsTrigrams('abc')).toBe('"abc"');
    expect(ftsTrigrams('a"b"')).toBe('"a""b" AND """b"""');
    expect(ftsTrigrams('*:^')).toBe('"*:^"');
  });
  it('counts characters, not UTF-16 units, and writes a lone surrogate as SQLite stores it (U+FFFD)', () => {
    expect(ftsTrigrams('😀😁😂x')).toBe('"😀😁😂" AND "😁😂x"');
    expect(ftsTrigrams('x\ud800y')).toBe('"x\ufffdy"');
    expect(ftsTrigrams('x\udc00y\ud800')).toBe('"x\ufffdy" AND "\ufffdy\ufffd"');
  });
  it('asks for at most MAX_TRIGRAMS of a long literal\'s trigrams, spread from the first to the last', () => {
    const literal = Array.from({ length: 200 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 5000))).join('');
    const terms = ftsTrigrams(literal)!.split(' AND ');
    expect(terms).toHaveLength(MAX_TRIGRAMS);
    expect(new Set(terms).size).toBe(MAX_TRIGRAMS);
    const chars = Array.from(literal);
    expect(terms[0]).toBe(`"${chars.slice(0, 3).join('')}"`);
    expect(terms[MAX_TRIGRAMS - 1]).toBe(`"${chars.slice(-3).join('')}"`);
  });
  it('has nothing to ask for below 3 characters or with a NUL (FTS5 reads its query only up to a NUL)', () => {
    expect(ftsTrigrams('ab')).toBeUndefined();
    expect(ftsTrigrams('😀😁')).toBeUndefined();
    expect(ftsTrigrams('abc\0def')).toBeUndefined();
  });
});

describe('SQLite trigram candidates without positions', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('sqlite');
  }, 120_000);
  afterAll(async () => db?.close());

  it('both trigram tables keep no positions; the value terms\' table keeps its own', () => {
    const sqlOf = (name: string) => String(db.handle.sqlite!.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name));
    expect(sqlOf('builds_trigram')).toMatch(/detail=none/);
    expect(sqlOf('build_custom_values_trigram')).toMatch(/detail=none/);
    expect(sqlOf('build_value_terms_trigram')).not.toMatch(/detail=/);
  });

  it('rejects candidates whose trigrams come from another column or lie apart', async () => {
    await clearBuilds(db.handle);
    const bs = [
      // `abcd`: "abc" in user, "bcd" in hostname.
      build('other-column', 'xabcx', 'ybcdy', 'p', [['n', 'v']]),
      // `abcd`: both trigrams in user, not adjacent.
      build('apart', 'abc-bcd', 'h', 'p', [['n', 'v']]),
      build('real', 'zabcdz', 'h', 'p', [['n', 'v']]),
      // `fd9f1`: "fd9", "d9f" in the name, "9f1" in the value of the same custom value row.
      build('kv-across', 'u', 'h', 'p', [['xfd9fx', 'y9f1y']]),
      build('kv-real', 'u', 'h', 'p', [['commit', '00fd9f1ab']]),
    ];
    await insertBuilds(db.handle, bs, { allIndexed: true });
    const candidates = (table: string, literal: string): string[] =>
      db.handle.sqlite!.prepare(`SELECT b.id FROM builds b JOIN build_custom_values c ON c.seq = b.seq WHERE ${table === 'builds_trigram' ? 'b.seq' : 'c.rowid'} IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?) GROUP BY b.id ORDER BY b.id`).pluck().all(ftsTrigrams(literal)) as string[];
    // The trigram tables name the decoys (so the test sees the LIKE reject them) ...
    expect(candidates('builds_trigram', 'abcd')).toEqual(['apart', 'other-column', 'real']);
    expect(candidates('build_custom_values_trigram', 'fd9f1')).toEqual(['kv-across', 'kv-real']);
    // ... and the search answers exactly.
    for (const [q, want] of [
      [stringTerm('user', 'abcd'), ['real']],
      [stringTerm('hostname', 'abcd'), []],
      [customTerm('value', 'fd9f1'), ['kv-real']],
      [customTerm('name', 'fd9f1'), []],
    ] as const) {
      expect(explainSql(q, 'sqlite').sql).toMatch(/MATCH/);
      expect(await searchIds(db.handle, q), explainSql(q, 'sqlite').sql).toEqual(want);
      expect(bs.filter((b) => evaluate(q, b)).map((b) => b.id)).toEqual(want);
    }
  });

  const LONG = `${'xyz'.repeat(3)}abcd${Array.from({ length: 60 }, (_, i) => String.fromCharCode(97 + ((i * 11) % 26))).join('')}`;
  const ODD = [LONG, LONG.slice(2, 50), 'a"b', '""""', 'q*r', '*:^', 'r:s', '^st', 'a\0bc', 'bc\0', '😀😁😂', '😁😂x', 'x\ud800y', '\udc00yz', 'ABC', 'Ünï', 'a b', '%_\\', 'and', 'NOT', 'near(', '{u}'];
  const VALUES = [`<${LONG}>`, LONG.slice(0, 40) + LONG.slice(41), 'xa"by', '"""""', 'q*r:s^t', 'pa\0bcq', 'bc\0d', '😀😁😂x', 'x\ud800yz', 'abcd', 'ÜnÏcode', 'a b c', '100%_\\x', 'and or not near({u})'];

  it('accepts every odd literal and answers as the LIKE alone (and the evaluator where SQLite keeps the text as written)', async () => {
    await clearBuilds(db.handle);
    const bs = VALUES.map((v, i) => build(`b${String(i).padStart(2, '0')}`, v, `h-${v}`, 'p', [[`n-${v}`, `v-${v}`]]));
    await insertBuilds(db.handle, bs, { allIndexed: true });
    for (const literal of ODD) {
      const wellFormed = !literal.includes('\0') && !/[\ud800-\udfff]/.test(literal.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
      for (const [q, where] of [
        [stringTerm('user', literal), likeAlone(db, 'user', literal)],
        [stringTerm('hostname', literal), likeAlone(db, 'hostname', literal)],
        [customTerm('name', literal), likeAloneCustom(db, 'name', literal)],
        [customTerm('value', literal), likeAloneCustom(db, 'value', literal)],
      ] as const) {
        const got = await searchIds(db.handle, q);
        expect(got, `${JSON.stringify(literal)}: ${explainSql(q, 'sqlite').sql}`).toEqual(where);
        if (wellFormed) expect(got, JSON.stringify(literal)).toEqual(bs.filter((b) => evaluate(q, b)).map((b) => b.id));
      }
    }
  });

  it('a NUL in the literal falls back to the LIKE alone (no trigram table in the statement)', () => {
    expect(explainSql(stringTerm('user', 'abc\0def'), 'sqlite').sql).not.toMatch(/MATCH/);
    expect(explainSql(customTerm('value', 'abc\0def'), 'sqlite').sql).not.toMatch(/MATCH/);
    expect(explainSql(stringTerm('user', 'abcdef'), 'sqlite').sql).toMatch(/builds_trigram/);
  });

  it('answers as the LIKE alone for random literals over an alphabet of odd characters', async () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', 'A', '"', '*', ':', '^', ' ', '%', '_', '\\', '😀', 'é', '\ud800', '\udc00', '\0');
    const str = (min: number, max: number) => fc.array(alphabet, { minLength: min, maxLength: max }).map((cs) => cs.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(str(0, 10), str(0, 10)), { minLength: 1, maxLength: 8 }), fc.array(str(3, 6), { minLength: 4, maxLength: 4 }), async (rows, literals) => {
        await clearBuilds(db.handle);
        await insertBuilds(db.handle, rows.map(([u, h], i) => build(`r${i}`, u, h, h, [[u, h]])), { allIndexed: true });
        for (const literal of literals) {
          expect(await searchIds(db.handle, stringTerm('user', literal)), JSON.stringify(literal)).toEqual(likeAlone(db, 'user', literal));
          expect(await searchIds(db.handle, customTerm('value', literal)), JSON.stringify(literal)).toEqual(likeAloneCustom(db, 'value', literal));
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
