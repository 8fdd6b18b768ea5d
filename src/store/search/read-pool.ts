// Search reads on SQLite in worker threads. better-sqlite3 runs a statement synchronously in the
// calling thread, so before this a search that took 40 s froze every request of the server for
// 40 s. Each worker (read-worker.ts) has its own read-only connection to the same WAL database and
// stops a statement at its deadline; the server's thread only waits for an answer.
//
// A job's deadline counts from when it is asked for, so time spent queued behind other searches
// counts too. Should a worker not answer shortly after a deadline (a statement stuck between two
// rows), it is terminated and replaced and the caller gets the timeout all the same.

import { DomainError } from '../../errors/domain.js';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../module-worker.js';
import type { Logger } from 'pino';
import type { PackedRows } from './packed-rows.js';
import type { PackFold, PackFolds } from '../events/test-packs.js';

/**
 * What a search thread answers for a statement: its rows, its rows packed column by column
 * (packed-rows.ts), or the test packs it selects folded in the thread by one of the folds of
 * events/test-packs.ts (PackFolds: failure groups, or per-test counts and failure groups).
 */
export type ReadForm = 'rows' | 'packed' | PackFold;

/** Called first in a search statement's WHERE clause by the workers' connections: throws after the deadline. */
export const DEADLINE_FUNCTION = 'buildscope_deadline';

/** A search ran past its time limit and was stopped. HTTP answers it with a 503 problem document. */
export class SearchTimeoutError extends DomainError {
  readonly kind = 'unavailable';
  constructor(readonly timeoutMs: number) {
    super(`The search ran longer than the server's limit of ${timeoutMs} ms and was stopped; narrow the query (fewer terms, values with a literal prefix, a shorter time range)`);
  }
}

/** A search thread failed or stopped (not a statement's own error): the caller may run the search itself. */
export class SearchThreadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SearchThreadError';
  }
}

function startWorker(file: string): Worker {
  return startModuleWorker(import.meta.url, 'read-worker', { workerData: { file } });
}

interface Job {
  readonly id: number;
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly form: ReadForm;
  readonly resolve: (rows: unknown[] | PackedRows | PackFolds[PackFold]) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** How long after a job's deadline a worker may take to say so before it is replaced. */
const GRACE_MS = 2000;

export class ReadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  /** `startThread` starts a worker for the database file (tests give broken or silent ones). */
  constructor(
    private readonly file: string,
    private readonly size: number,
    private readonly logger?: Pick<Logger, 'warn'>,
    private readonly startThread: (file: string) => Worker = startWorker,
  ) {}

  /** The rows of a compiled statement, or a SearchTimeoutError after `timeoutMs` (queueing included). */
  run(sql: string, parameters: readonly unknown[], timeoutMs: number): Promise<unknown[]> {
    return this.job(sql, parameters, timeoutMs, 'rows') as Promise<unknown[]>;
  }

  /** The rows of a compiled statement packed column by column (packed-rows.ts), as `run`. */
  runPacked(sql: string, parameters: readonly unknown[], timeoutMs: number): Promise<PackedRows> {
    return this.job(sql, parameters, timeoutMs, 'packed') as Promise<PackedRows>;
  }

  /** The fold `fold` of the test packs a compiled statement selects (events/test-packs.ts), as `run`. */
  runFolded<F extends PackFold>(sql: string, parameters: readonly unknown[], timeoutMs: number, fold: F): Promise<PackFolds[F]> {
    return this.job(sql, parameters, timeoutMs, fold) as Promise<PackFolds[F]>;
  }

  private job(sql: string, parameters: readonly unknown[], timeoutMs: number, form: ReadForm): Promise<unknown[] | PackedRows | PackFolds[PackFold]> {
    if (this.closed) return Promise.reject(new Error('The store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, sql, parameters, deadline: Date.now() + timeoutMs, timeoutMs, form, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new Error('The store is closed'));
    const slots = this.slots.splice(0);
    for (const s of slots) {
      clearTimeout(s.timer);
      s.job?.reject(new Error('The store is closed'));
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === undefined);
      if (slot === undefined && this.slots.length < this.size) slot = this.start();
      if (slot === undefined) return;
      const job = this.queue.shift()!;
      const left = job.deadline - Date.now();
      if (left <= 0) {
        job.reject(new SearchTimeoutError(job.timeoutMs));
        continue;
      }
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, sql: job.sql, parameters: job.parameters, deadline: job.deadline, form: job.form });
      slot.timer = setTimeout(() => this.stuck(slot), left + GRACE_MS);
    }
  }

  private start(): Slot {
    const slot: Slot = { worker: this.startThread(this.file), job: undefined, timer: undefined };
    const w = slot.worker;
    w.on('message', (m: { id: number; answer?: unknown[] | PackedRows | PackFolds[PackFold]; error?: string; timeout?: boolean }) => {
      const job = slot.job;
      if (job === undefined || job.id !== m.id) return;
      clearTimeout(slot.timer);
      slot.job = undefined;
      w.unref();
      if (m.answer !== undefined) job.resolve(m.answer);
      else if (m.timeout) job.reject(new SearchTimeoutError(job.timeoutMs));
      else job.reject(new Error(m.error));
      this.dispatch();
    });
    const fail = (e: Error): void => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      clearTimeout(slot.timer);
      slot.job?.reject(e);
      slot.job = undefined;
      if (!this.closed) this.dispatch();
    };
    w.on('error', (e) => {
      this.logger?.warn({ err: e }, 'A search worker thread failed; it is replaced');
      fail(new SearchThreadError(`A search worker thread failed: ${e.message}`, { cause: e }));
    });
    w.on('exit', (code) => fail(new SearchThreadError(`A search worker thread stopped (exit code ${code})`)));
    w.unref();
    this.slots.push(slot);
    return slot;
  }

  /** The worker did not answer by its job's deadline and grace: replace it, the caller gets the timeout. */
  private stuck(slot: Slot): void {
    const job = slot.job;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    slot.job = undefined;
    this.logger?.warn({ timeoutMs: job?.timeoutMs }, 'A search worker thread did not stop at its deadline; it is replaced');
    void slot.worker.terminate();
    job?.reject(new SearchTimeoutError(job.timeoutMs));
    this.dispatch();
  }
}
