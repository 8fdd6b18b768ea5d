// Worker thread of FoldThread (fold-thread.ts): folds the test pack streams of a statement
// (events/test-packs.ts) and sends back the fold's arrays, transferred.

import { parentPort } from 'node:worker_threads';
import { foldedBuffers, foldPacks, type PackFold } from '../events/test-packs.js';

parentPort!.on('message', (job: { readonly id: number; readonly rows: readonly (readonly unknown[])[]; readonly fold: PackFold }) => {
  try {
    const folded = foldPacks(job.fold, job.rows);
    parentPort!.postMessage({ id: job.id, answer: folded }, foldedBuffers(folded));
  } catch (e) {
    parentPort!.postMessage({ id: job.id, error: (e as Error).message });
  }
});
