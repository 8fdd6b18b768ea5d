import { describe, expect, it } from 'vitest';
import { FIELDS, findField } from '../../src/query/catalog.js';
import { createTestDatabase, pgAvailable } from './postgres.js';
import pg from 'pg';

describe('catalog', () => {
  it("holds the seed's 13 generic fields and the three of the build's tests, and resolves names case-insensitively", () => {
    expect(FIELDS.filter((f) => f.tool === null).map((f) => f.name)).toEqual([
      'user', 'hostname', 'project', 'requested', 'buildTool', 'buildToolVersion', 'value', 'tag', 'buildOutcome', 'buildDuration', 'buildStartTime', 'hasVerificationFailure', 'hasNonVerificationFailure',
      'failedTest', 'flakyTest', 'hasFailedTest',
    ]);
    expect(findField('BUILDOUTCOME')?.name).toBe('buildOutcome');
    expect(new Set(FIELDS.map((f) => f.column)).size).toBe(FIELDS.length);
    expect(Math.max(...FIELDS.map((f) => f.column.length))).toBeLessThanOrEqual(63);
  });
});

describe.skipIf(!pgAvailable())('test PostgreSQL server', () => {
  it('gives each test file its own database', async () => {
    const db = (await createTestDatabase())!;
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const r = await c.query('select 1 + 1 as two');
    expect(r.rows[0].two).toBe(2);
    await c.end();
    await db.drop();
  });
});
