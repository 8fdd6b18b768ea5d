// Worker thread of the ingest (see prepare-pool.ts): prepares batches of lines (prepare.ts) while
// the ingest's own thread writes the previous batch to the database.

import { parentPort } from 'node:worker_threads';
import type { NumberedLine } from './lines.js';
import type { OutputBounds } from './output-bounds.js';
import { prepareLines } from './prepare.js';

interface Job {
  readonly id: number;
  readonly lines: readonly NumberedLine[];
  readonly bounds?: OutputBounds;
}

parentPort!.on('message', (job: Job) => {
  parentPort!.postMessage({ id: job.id, prepared: prepareLines(job.lines, job.bounds) });
});
