// A bulk load on SQLite spaces its checkpoints out (src/store/ingest/bulk-checkpoints.ts): the WAL grows
// past SQLite's 1,000-page checkpoint over several commits, up to a share of the database, and
// when the load ends, however it ends, the connection's settings are back and the WAL is
// checkpointed and cut back to its limit at the next restart. Two bulk loads at once on one
// connection: the settings come back when the last one ends.

import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BULK_WAL_BYTES, BULK_WAL_SHARE, bulkCheckpointPages } from '../../src/store/ingest/bulk-checkpoints.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/db/database.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { completeBuild, id, useTestStore } from './support.js';

describe('checkpoints of a bulk load on sqlite', () => {
  const t = useTestStore('sqlite', false);
  const pragma = (name: string): number => Number(t.handle.sqlite!.pragma(name, { simple: true }));
  const walBytes = (): number => statSync(`${t.handle.describe}-wal`).size;
  const lines = (n: number): string => Array.from({ length: n }, () => completeBuild(id())).join('\n');
  /** An input that yields its first lines, then waits for `release` before the rest. */
  function held(first: string, rest: string): { input: AsyncGenerator<string>; release: () => void } {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* input(): AsyncGenerator<string> {
      yield first + '\n';
      await gate;
      yield rest + '\n';
    }
    return { input: input(), release };
  }

  /** Makes the database `mb` MB larger (a table of its own), so that its WAL may grow. */
  function grow(mb: number): void {
    const db = t.handle.sqlite!;
    db.exec('CREATE TABLE IF NOT EXISTS filler (b BLOB)');
    const insert = db.prepare('INSERT INTO filler VALUES (zeroblob(1048576))');
    db.transaction(() => {
      for (let i = 0; i < mb; i++) insert.run();
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Takes the table of `grow` away, and the database back to the size of what is left. */
  function shrink(): void {
    t.handle.sqlite!.exec('DROP TABLE filler; VACUUM');
  }

  it('lets the WAL grow over many commits, and afterwards puts the settings back and checkpoints', async () => {
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    expect(pragma('journal_size_limit')).toBe(WAL_SIZE_LIMIT_BYTES);
    // A database of 60 MB may have 15 MB of WAL between checkpoints; and a small limit, so that
    // the cut back after the load shows.
    grow(60);
    t.handle.sqlite!.pragma('journal_size_limit = 65536');
    try {
      await growAndCutBack();
    } finally {
      t.handle.sqlite!.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      shrink();
    }
  }, 60_000);

  async function growAndCutBack(): Promise<void> {
    const pageSize = pragma('page_size');
    let during = 0;
    let largest = 0;
    // Small transactions: 30 commits of 100 builds.
    await t.store.ingestNdjson(lines(3000), {
      bulk: true,
      batchSize: 100,
      onResults: () => {
        during = pragma('wal_autocheckpoint');
        largest = Math.max(largest, walBytes());
      },
    });
    expect(during).toBe(bulkCheckpointPages(Number(t.handle.sqlite!.pragma('page_count', { simple: true })), pageSize, 1000));
    expect(during).toBeGreaterThan(3500);
    // With a checkpoint every 1,000 pages the WAL restarts before it passes ~1,000 pages and a commit.
    expect(largest).toBeGreaterThan(2000 * pageSize);
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    expect(pragma('journal_size_limit')).toBe(65536);
    // Everything in the WAL is in the database.
    const [state] = t.handle.sqlite!.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(state!.checkpointed).toBe(state!.log);
    // The next transaction restarts the WAL, cut back to the limit before it writes its own pages.
    await t.store.ingestNdjson(completeBuild(id()));
    expect(walBytes()).toBeLessThan(largest / 10);
    expect(await t.store.countBuilds({ visibility: SEE_EVERYTHING })).toBe(3001);
  }

  it('checkpoints as usual in a small database, and outside a bulk load', async () => {
    let during = 0;
    await t.store.ingestNdjson(lines(1000), { bulk: true, batchSize: 100, onResults: () => (during = pragma('wal_autocheckpoint')) });
    expect(during).toBe(1000);
    grow(60);
    let largest = 0;
    await t.store.ingestNdjson(lines(3000), { batchSize: 100, onResults: () => (largest = Math.max(largest, walBytes())) });
    expect(largest).toBeLessThan(1500 * pragma('page_size'));
    shrink();
  }, 60_000);

  it('allows a quarter of the database, at most 400 MB, and never less than the connection', () => {
    expect(bulkCheckpointPages(1000, 4096, 1000)).toBe(1000);
    expect(bulkCheckpointPages(40_000, 4096, 1000)).toBe(10_000);
    expect(bulkCheckpointPages(10_000_000, 4096, 1000)).toBe(BULK_WAL_BYTES / 4096);
    expect(bulkCheckpointPages(10_000_000, 16_384, 1000)).toBe(BULK_WAL_BYTES / 16_384);
    fc.assert(
      fc.property(fc.nat(50_000_000), fc.nat(50_000_000), fc.constantFrom(1024, 4096, 16_384, 65_536), fc.integer({ min: 0, max: 200_000 }), (a, b, size, own) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        const pages = bulkCheckpointPages(small, size, own);
        expect(pages).toBeGreaterThanOrEqual(own);
        expect(pages).toBeLessThanOrEqual(bulkCheckpointPages(large, size, own));
        if (pages > own) expect(pages * size).toBeLessThanOrEqual(Math.min(BULK_WAL_BYTES, small * size * BULK_WAL_SHARE));
      }),
    );
  });

  it('puts the settings back when the last of two bulk loads at once ends, and when the input fails', async () => {
    grow(60);
    const a = held(lines(50), lines(50));
    // The first load stays open, waiting for the rest of its input, while the second runs.
    const first = t.store.ingestNdjson(a.input, { bulk: true });
    await t.store.ingestNdjson(lines(20), { bulk: true });
    expect(pragma('wal_autocheckpoint')).toBeGreaterThan(1000);
    a.release();
    await first;
    expect(pragma('wal_autocheckpoint')).toBe(1000);

    async function* broken(): AsyncGenerator<string> {
      yield lines(10) + '\n';
      throw new Error('the input broke');
    }
    await expect(t.store.ingestNdjson(broken(), { bulk: true })).rejects.toThrow('the input broke');
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    expect(pragma('journal_size_limit')).toBe(WAL_SIZE_LIMIT_BYTES);
    shrink();
  }, 60_000);
});
