// A bulk load on SQLite spaces its checkpoints out (src/store/bulk-checkpoints.ts): the WAL grows
// past SQLite's 1,000-page checkpoint over several commits, and when the load ends, however it
// ends, the connection's settings are back and the WAL is checkpointed and cut back to its limit
// at the next restart. Two bulk loads at once on one connection: the settings come back when the
// last one ends.

import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BULK_WAL_BYTES } from '../../src/store/bulk-checkpoints.js';
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

  it('lets the WAL grow over many commits, and afterwards puts the settings back and checkpoints', async () => {
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    expect(pragma('journal_size_limit')).toBe(WAL_SIZE_LIMIT_BYTES);
    // A small limit, so that the cut back after the load shows.
    t.handle.sqlite!.pragma('journal_size_limit = 65536');
    try {
      await growAndCutBack();
    } finally {
      t.handle.sqlite!.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
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
    expect(during).toBe(Math.floor(BULK_WAL_BYTES / pageSize));
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

  it('checkpoints as usual outside a bulk load', async () => {
    let largest = 0;
    await t.store.ingestNdjson(lines(3000), { batchSize: 100, onResults: () => (largest = Math.max(largest, walBytes())) });
    expect(largest).toBeLessThan(1500 * pragma('page_size'));
  }, 60_000);

  it('puts the settings back when the last of two bulk loads at once ends, and when the input fails', async () => {
    const a = held(lines(50), lines(50));
    const first = t.store.ingestNdjson(a.input, { bulk: true });
    await new Promise((r) => setTimeout(r, 300));
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
  }, 60_000);
});
