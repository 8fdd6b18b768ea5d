// The SQLite search threads (read-pool.ts): statements run on the worker's own connection; a
// statement's error is the caller's error and the thread goes on; a thread that fails is a
// SearchThreadError (the store then runs the search itself); a thread that does not answer by
// the deadline is replaced and the caller gets SearchTimeoutError.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool, SearchThreadError, SearchTimeoutError } from '../../src/store/search/read-pool.js';

describe('search threads', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-pool-'));
    file = join(dir, 'db.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    db.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs statements on the worker's connection, and a statement's error does not stop the thread", async () => {
    const pool = new ReadPool(file, 1);
    try {
      expect(await pool.run('SELECT x FROM t WHERE x >= ? ORDER BY x', [2], 5000)).toEqual([{ x: 2 }, { x: 3 }]);
      await expect(pool.run('SELECT nope FROM t', [], 5000)).rejects.toThrow(/no such column: nope/);
      expect(await pool.run('SELECT count(*) AS n FROM t WHERE buildscope_deadline() = 1', [], 5000)).toEqual([{ n: 3 }]);
    } finally {
      await pool.close();
    }
  });

  it('stops a statement at its deadline from inside the thread', async () => {
    const pool = new ReadPool(file, 1);
    try {
      // A statement that runs forever but calls the deadline check for every row it makes.
      const forever = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE buildscope_deadline() = 1) SELECT count(*) FROM n';
      await pool.run('SELECT 1', [], 30_000); // the thread is up
      const t = Date.now();
      await expect(pool.run(forever, [], 200)).rejects.toBeInstanceOf(SearchTimeoutError);
      // Stopped by the thread itself, well before the pool would give up on it (deadline + 2 s).
      expect(Date.now() - t).toBeLessThan(2000);
      expect(await pool.run('SELECT 7 AS x', [], 5000)).toEqual([{ x: 7 }]);
    } finally {
      await pool.close();
    }
  });

  it('says SearchThreadError when a thread cannot start', async () => {
    const pool = new ReadPool(file, 1, undefined, () => new Worker('throw new Error("broken installation")', { eval: true }));
    try {
      await expect(pool.run('SELECT 1', [], 5000)).rejects.toBeInstanceOf(SearchThreadError);
    } finally {
      await pool.close();
    }
  });

  it('replaces a thread that does not answer by the deadline, and the caller gets the timeout', async () => {
    let started = 0;
    const pool = new ReadPool(file, 1, undefined, () => {
      started++;
      return new Worker('setInterval(() => {}, 1000)', { eval: true });
    });
    try {
      const t = Date.now();
      await expect(pool.run('SELECT 1', [], 100)).rejects.toBeInstanceOf(SearchTimeoutError);
      // The deadline plus the grace of 2 s; generous upper bound for a loaded machine.
      expect(Date.now() - t).toBeGreaterThanOrEqual(2000);
      expect(Date.now() - t).toBeLessThan(15_000);
      await expect(pool.run('SELECT 1', [], 100)).rejects.toBeInstanceOf(SearchTimeoutError);
      expect(started).toBe(2);
    } finally {
      await pool.close();
    }
  }, 40_000);
});
