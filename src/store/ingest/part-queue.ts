// The parts of an ingest between reading and writing, and who prepares each (prepare.ts): this
// thread or the worker thread (prepare-pool.ts).
//
// The first part is prepared here, when it is written: a short input never waits for a worker to
// start, and a long one has its next parts on their way to the worker by then. The others go to
// the worker. In a bulk load the two threads share the preparing as well: nothing else waits on
// this thread, and when the worker is the slower of the two (builds of many tests, whose
// preparing costs more than their writing) this thread would otherwise wait for it. So the worker
// is given at most WORKER_DEPTH parts at a time, and while the part to be written next is still
// at the worker, this thread prepares a part the worker has not been given.

import { setImmediate } from 'node:timers/promises';
import type { NumberedLine } from './lines.js';
import type { PreparedLine } from './prepare.js';

/**
 * Parts out at the worker at a time when sharing: one being prepared, one queued behind it, so
 * that the worker goes on while this thread is inside a synchronous write and cannot hand it the
 * next part.
 */
const WORKER_DEPTH = 2;

export interface Preparers {
  /** Prepares in this thread. */
  here(lines: readonly NumberedLine[]): PreparedLine[];
  /** Prepares in the worker thread (falling back to `here` should it fail); undefined when there is none. */
  readonly worker: ((lines: readonly NumberedLine[]) => Promise<PreparedLine[]>) | undefined;
  /** Whether this thread shares the preparing with the worker (a bulk load). */
  readonly share: boolean;
}

interface Part {
  readonly texts: readonly NumberedLine[];
  /** Set once the part is given to someone to prepare. */
  prepared?: Promise<PreparedLine[]>;
  /** Whether `prepared` has settled (seen when this thread last let the worker's answers in). */
  settled: boolean;
  /** The input's first part, which is prepared here. */
  readonly first: boolean;
}

export interface ReadyPart {
  readonly texts: readonly NumberedLine[];
  readonly lines: readonly PreparedLine[];
}

export class PartQueue {
  private readonly parts: Part[] = [];
  private pushed = 0;
  /** Parts given to the worker that it has not answered for. */
  private atWorker = 0;

  constructor(private readonly preparers: Preparers) {}

  get length(): number {
    return this.parts.length;
  }

  /** A part read from the input, in order. */
  push(texts: readonly NumberedLine[]): void {
    this.parts.push({ texts, settled: false, first: this.pushed++ === 0 });
    this.feed();
  }

  /** The first part, prepared. */
  async next(): Promise<ReadyPart> {
    const part = this.parts.shift();
    if (part === undefined) throw new Error('PartQueue.next() with no part');
    if (part.prepared === undefined) this.prepareHere(part);
    else if (this.preparers.share && !part.settled) {
      // Let in the worker's answers that arrived during this thread's last synchronous work.
      await setImmediate();
      // Still out: prepare a part the worker was not given meanwhile, the last one (it takes the
      // earlier ones first).
      const spare = part.settled ? undefined : this.parts.findLast((p) => p.prepared === undefined);
      if (spare !== undefined) this.prepareHere(spare);
    }
    return { texts: part.texts, lines: await part.prepared! };
  }

  private prepareHere(part: Part): void {
    try {
      part.prepared = Promise.resolve(this.preparers.here(part.texts));
    } catch (e) {
      // A spare part's failure is its own: it surfaces when that part is written, not before.
      part.prepared = Promise.reject(e as Error);
      part.prepared.catch(() => undefined);
    }
    part.settled = true;
  }

  /** Gives the worker the earliest parts no one prepares yet (all of them, unless sharing). */
  private feed(): void {
    const { worker, share } = this.preparers;
    if (worker === undefined) return;
    for (const part of this.parts) {
      if (share && this.atWorker >= WORKER_DEPTH) return;
      if (part.prepared !== undefined || part.first) continue;
      this.atWorker++;
      part.prepared = worker(part.texts).finally(() => {
        part.settled = true;
        this.atWorker--;
        this.feed();
      });
    }
  }
}
