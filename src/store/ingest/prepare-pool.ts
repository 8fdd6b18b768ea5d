// Runs prepare.ts in a worker thread, so that on a machine with a second core the parsing,
// validation, encoding, hashing and derivation of a batch overlap the database writes of the
// previous one. One worker per store, started by the first ingest long enough to need it and
// kept (unreferenced: it never keeps the process alive) until the store closes.

import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../module-worker.js';
import type { Logger } from 'pino';
import type { NumberedLine } from './lines.js';
import type { OutputBounds } from './output-bounds.js';
import type { PreparedLine } from './prepare.js';

/**
 * The worker's heap. Its young generation, where a part's short-lived objects (parsed events)
 * live and die: 8 MB instead of V8's default (up to 48 MB), measured 35 MB less peak RSS over an
 * ingest of 30k builds. Its old generation: 64 MB, where V8 let it grow with the rate of
 * allocation, not with what it keeps (a part's lines): with it, `buildscope ingest` of 100,000
 * demo builds peaked at 252-291 MB against 287-320 (docs/store.md, "Ingest performance").
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };

/**
 * The longest line the worker is given, in bytes (or characters). Within 64 MB of old generation
 * the worker prepared a line of 9.2 MB (30,000 tests) and ran out of memory on one of 18.4 MB; a
 * part with a longer line is prepared in the ingest's thread, whose heap has no such limit, and the
 * worker is kept.
 */
export const WORKER_LINE_BYTES = 4 * 1024 * 1024;

/** Whether a part may go to the worker: none of its lines is longer than WORKER_LINE_BYTES. */
function fitsWorker(lines: readonly NumberedLine[]): boolean {
  return lines.every((l) => (typeof l.text === 'string' ? l.text.length : l.text.byteLength) <= WORKER_LINE_BYTES);
}

function startWorker(): Worker {
  return startModuleWorker(import.meta.url, 'prepare-worker', { resourceLimits: WORKER_LIMITS });
}

interface Pending {
  readonly resolve: (lines: PreparedLine[]) => void;
  readonly reject: (e: Error) => void;
}

export class PreparePool {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  /**
   * Set when a worker could not start or failed before preparing anything: so would the next one
   * (a broken installation), and starting a thread for every batch only to lose it costs more than
   * preparing the batch. From then on every job is refused at once, and the ingest prepares inline.
   */
  private unavailable: Error | undefined;
  /** Lines prepared by the worker so far. */
  linesPrepared = 0;

  /**
   * `logger` hears of a worker that fails (the ingest then prepares its batches itself);
   * `startThread` starts the worker (tests give a failing one).
   */
  constructor(
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly startThread: () => Worker = startWorker,
  ) {}

  prepare(lines: readonly NumberedLine[], bounds?: OutputBounds): Promise<PreparedLine[]> {
    if (this.unavailable !== undefined) return Promise.reject(this.unavailable);
    // Refused without the worker, which is kept: the caller prepares the part itself.
    if (!fitsWorker(lines)) return Promise.reject(new RangeError(`A line is longer than the ingest worker takes (${WORKER_LINE_BYTES} bytes)`));
    let worker: Worker;
    try {
      worker = this.worker ?? this.start();
    } catch (e) {
      this.unavailable = e as Error;
      this.logger?.warn({ err: e }, 'The ingest worker thread could not start; batches are prepared in the ingest thread from now on');
      return Promise.reject(e as Error);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, lines, ...(bounds ? { bounds } : {}) });
      // Referenced while a job is out: the ingest awaits it.
      worker.ref();
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w !== undefined) await w.terminate();
  }

  private start(): Worker {
    const worker = this.startThread();
    let answered = false;
    worker.on('message', (m: { id: number; prepared: PreparedLine[] }) => {
      answered = true;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      this.linesPrepared += m.prepared.length;
      p?.resolve(m.prepared);
    });
    const fail = (e: Error): void => {
      // Not after close(), which lets go of the worker before stopping it.
      if (this.worker === worker) {
        this.worker = undefined;
        if (answered) this.logger?.warn({ err: e }, 'The ingest worker thread failed; batches are prepared in the ingest thread until a new one starts');
        else {
          this.unavailable = e;
          this.logger?.warn({ err: e }, 'The ingest worker thread failed before preparing a batch; batches are prepared in the ingest thread from now on');
        }
      }
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    // An error is followed by an exit, which finds the worker let go already.
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The ingest's worker thread stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
