// Folds test pack streams (events/test-packs.ts) in a worker thread where the database has no
// search threads to fold them (PostgreSQL): the server's thread folded each range of a Tests page's
// packs as it arrived, 260 ms of its time for 50,000 builds' packs at 20 million executions,
// during which it answered nothing else and read no further range. A thread is started on first
// use and unreferenced (it never keeps the process alive) until the store closes; the search guard
// keeps two (search-guard.ts, FOLD_THREADS), and folds in its own thread should one fail.

import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { PackFold, PackFolds } from '../events/test-packs.js';
import { startModuleWorker } from '../../module-worker.js';

interface Pending {
  readonly resolve: (answer: PackFolds[PackFold]) => void;
  readonly reject: (e: Error) => void;
}

export class FoldThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  /** `startThread` starts the worker (tests give a failing one). */
  constructor(
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly startThread: () => Worker = () => startModuleWorker(import.meta.url, 'fold-worker'),
  ) {}

  /** Folds asked for and not yet answered. */
  get folding(): number {
    return this.pending.size;
  }

  /** The fold `fold` of a statement's rows of pack streams (one column each). */
  fold<F extends PackFold>(rows: readonly (readonly unknown[])[], fold: F): Promise<PackFolds[F]> {
    if (this.closed) return Promise.reject(new Error('The store is closed'));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as Pending['resolve'], reject });
      worker.postMessage({ id, rows, fold });
      worker.ref();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = undefined;
    this.failAll(new Error('The store is closed'));
    if (w !== undefined) await w.terminate();
  }

  private start(): Worker {
    const worker = this.startThread();
    worker.on('message', (m: { id: number; answer?: PackFolds[PackFold]; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.answer !== undefined) p?.resolve(m.answer);
      else p?.reject(new Error(m.error));
    });
    const fail = (e: Error): void => {
      // Not after close(), which lets go of the worker before stopping it.
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.logger?.warn({ err: e }, 'The test packs fold thread failed; a new one starts for the next fold');
      this.failAll(e);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The test packs fold thread stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
