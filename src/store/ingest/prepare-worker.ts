// Worker thread of the ingest (see prepare-pool.ts): prepares batches of lines (prepare.ts) while
// the ingest's own thread writes the previous batch to the database.

import { parentPort } from 'node:worker_threads';
import type { NumberedLine } from './lines.js';
import type { OutputBounds } from './output-bounds.js';
import { prepareLines, type PreparedLine } from './prepare.js';

interface Job {
  readonly id: number;
  readonly lines: readonly NumberedLine[];
  readonly bounds?: OutputBounds;
}

parentPort!.on('message', (job: Job) => {
  // The events' text stays here: the ingest's thread unpacks it the few times it needs it (PreparedRecord.eventsJson).
  const prepared = prepareLines(job.lines, job.bounds).map((p): PreparedLine => {
    if (!p.prepared.ok) return p;
    const { eventsJson: _text, ...packedOnly } = p.prepared;
    return { line: p.line, prepared: packedOnly };
  });
  parentPort!.postMessage({ id: job.id, prepared });
});
