// A statement's one column read through PostgreSQL's binary COPY (src/store/search/pg-copy.ts):
// its values back to back, whatever they hold, with the statement's parameters written in as
// literals; what it cannot write in, and output that is not a binary COPY's, are refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { inject } from 'vitest';
import type { CompiledQuery } from 'kysely';
import { binaryCopyOf, copiedValues, readCopied } from '../../src/store/search/pg-copy.js';
import { pgAvailable } from '../support/postgres.js';
import { SearchGuard } from '../../src/store/search/search-guard.js';
import { SearchTimeoutError } from '../../src/store/search/read-pool.js';
import { dialectOf } from '../../src/sql/index.js';
import { openTestStore, type TestStore } from './support.js';

const compiled = (sql: string, parameters: readonly unknown[]): CompiledQuery => ({ sql, parameters, query: { kind: 'RawNode' } as never, queryId: { queryId: 'q' } });

describe('binaryCopyOf', () => {
  it('writes numbers and bytes in as literals, outside quoted text only', () => {
    expect(binaryCopyOf(compiled(`SELECT "a$1" FROM t WHERE x >= $1 AND s = 'it''s $2' AND b = $2 AND y < $10`, [5, Uint8Array.of(1, 171), ...Array(7).fill(0), 12n]))).toBe(
      `COPY (SELECT "a$1" FROM t WHERE x >= 5 AND s = 'it''s $2' AND b = '\\x01ab'::bytea AND y < 12) TO STDOUT (FORMAT binary)`,
    );
  });

  it('refuses a parameter it cannot write as a literal', () => {
    expect(() => binaryCopyOf(compiled('SELECT $1', ['text']))).toThrow('A statement read by COPY takes numbers and bytes as parameters, not string');
    expect(() => binaryCopyOf(compiled('SELECT $1', [Number.NaN]))).toThrow(/not number/);
  });
});

describe('copiedValues', () => {
  it('refuses bytes that are not a binary COPY, or one cut short', () => {
    expect(() => copiedValues(Buffer.from('not a copy at all'))).toThrow('Not the output of a binary COPY');
    // The header (signature, flags, no extension), a row of one 3-byte value, the trailer.
    // (A new one each time: the values are moved to the front of the bytes given.)
    const whole = () => Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8), Buffer.from([0, 1, 0, 0, 0, 3, 7, 8, 9, 0xff, 0xff])]);
    expect([...copiedValues(whole())]).toEqual([7, 8, 9]);
    expect(() => copiedValues(whole().subarray(0, whole().length - 2))).toThrow('A binary COPY ended without its trailer');
    expect(() => copiedValues(whole().subarray(0, whole().length - 3))).toThrow('A binary COPY ended within a value');
  });
});

describe.skipIf(!pgAvailable())('readCopied on PostgreSQL', () => {
  const client = new pg.Client({ connectionString: inject('pgAdminUrl') });
  beforeAll(() => client.connect());
  afterAll(() => client.end());

  it('reads the values of a column back to back, nulls adding nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(fc.uint8Array({ maxLength: 300 }), { nil: null }), { minLength: 1, maxLength: 40 }), async (values) => {
        // Each value a parameter, a null written in; the text holds a quoted `$1` that stays.
        const parameters: unknown[] = [];
        const rows = values.map((v, i) => `(${v === null ? 'NULL::bytea' : `$${parameters.push(v)}::bytea`}, ${i})`);
        const q = compiled(`SELECT v FROM (VALUES ${rows.join(', ')}) AS t(v, o) WHERE 'costs $1' <> '' ORDER BY o`, parameters);
        const expected = Buffer.concat(values.flatMap((v) => (v === null ? [] : [v])));
        expect(Buffer.from(await readCopied(client, q))).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  });

  it("rejects with PostgreSQL's error, its code kept", async () => {
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL statement_timeout = 1');
      await expect(readCopied(client, compiled('SELECT CAST(CAST(pg_sleep(2) AS text) AS bytea)', []))).rejects.toMatchObject({ code: '57014' });
    } finally {
      await client.query('ROLLBACK');
    }
  });
});

describe.skipIf(!pgAvailable())("the search guard's binary COPY on PostgreSQL", () => {
  let t: TestStore;
  let guard: SearchGuard;
  beforeAll(async () => {
    t = await openTestStore('postgres');
    guard = new SearchGuard(t.handle, dialectOf('postgres'), { timeoutMs: 300, threads: 0 });
  });
  afterAll(async () => {
    await guard?.close();
    await t?.close();
  });

  it('stops a COPY at the search deadline, and the connection serves the next search', async () => {
    const slow = compiled('SELECT CAST(NULL AS bytea) FROM pg_sleep(5)', []);
    // Three times: three connections kept would leave the pool (10) fewer than the slots (8).
    for (let i = 0; i < 3; i++) await expect(guard.search((_read, _packed, readFolded) => readFolded(slow, 'failureGroups'))).rejects.toBeInstanceOf(SearchTimeoutError);
    // More searches than slots afterwards, each with time to wait for one (the machine is shared):
    // no connection was kept, nor given back in an aborted transaction.
    const none = compiled('SELECT CAST(NULL AS bytea) WHERE false', []);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => guard.search((read, _packed, readFolded) => Promise.all([read(compiled('SELECT 1 AS one', [])), readFolded(none, 'failureGroups')]), { timeoutMs: 30_000 })),
    );
    for (const [rows, groups] of answers) {
      expect(rows).toEqual([{ one: 1 }]);
      expect(groups.ids).toHaveLength(0);
    }
  });

  // PostgreSQL cannot interrupt its JIT compiler: with it, facets limited to 300 ms were cancelled
  // after seconds (docs/store.md, "Search time limit and search threads").
  it("runs a search's statements without JIT compilation, and only the search's", async () => {
    const [rows] = await guard.search((read) => Promise.all([read(compiled("SELECT current_setting('jit') AS jit", []))]), { timeoutMs: 30_000 });
    expect(rows).toEqual([{ jit: 'off' }]);
    // The pool's connections keep the server's own setting (SET LOCAL ends with the transaction).
    const outside = await t.handle.pool!.query("SELECT current_setting('jit') = (SELECT reset_val FROM pg_settings WHERE name = 'jit') AS kept");
    expect(outside.rows).toEqual([{ kept: true }]);
  });
});
