// The fold thread of PostgreSQL's searches (src/store/search/fold-thread.ts): it answers what the
// fold in this thread answers, and a thread that fails rejects its folds (the search guard then
// folds them itself) and is replaced for the next one.

import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { encodeFailurePack, encodeTestPack, foldPacks } from '../../src/store/events/test-packs.js';
import { FoldThread } from '../../src/store/search/fold-thread.js';
import { startModuleWorker } from '../../src/module-worker.js';
import { packStreamOf } from './pack-stream.js';

/** A pack stream of two builds. */
function stream(): Buffer {
  return packStreamOf([
    [7, 1_700_000_000_000, encodeTestPack([[1, 0, 12], [2, 1, 30], [2, 0, 31]]), encodeFailurePack([[4, 2]])],
    [9, null, encodeTestPack([[1, 1, 5]]), encodeFailurePack([[4, 1], [5, null]])],
  ]);
}

describe('the fold thread', () => {
  it('answers the fold of this thread, for each fold', async () => {
    const thread = new FoldThread();
    try {
      const rows = [[stream()], [null]];
      expect(await thread.fold(rows, 'both')).toEqual(foldPacks('both', rows));
      expect(await thread.fold(rows, 'failureGroups')).toEqual(foldPacks('failureGroups', rows));
      expect((await thread.fold(rows, 'both')).counts.ids).toEqual(Float64Array.from([1, 2]));
    } finally {
      await thread.close();
    }
  });

  it('rejects the folds of a thread that fails, and starts another for the next', async () => {
    let started = 0;
    const warnings: string[] = [];
    const thread = new FoldThread({ warn: (_o: unknown, m: string) => void warnings.push(m) } as never, () => {
      started++;
      return started === 1 ? new Worker('throw new Error("a broken installation")', { eval: true }) : startModuleWorker(new URL('../../src/store/search/fold-thread.ts', import.meta.url).href, 'fold-worker');
    });
    try {
      await expect(thread.fold([[stream()]], 'both')).rejects.toThrow(/broken installation/);
      expect(warnings).toEqual(['The test packs fold thread failed; a new one starts for the next fold']);
      expect(await thread.fold([[stream()]], 'failureGroups')).toEqual(foldPacks('failureGroups', [[stream()]]));
      expect(started).toBe(2);
    } finally {
      await thread.close();
    }
    await expect(thread.fold([[stream()]], 'both')).rejects.toThrow(/closed/);
  });
});
