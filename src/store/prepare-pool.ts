// Runs prepare.ts in a worker thread, so that on a machine with a second core the parsing,
// validation, encoding, hashing and derivation of a batch overlap the database writes of the
// previous one. One worker per store, started by the first ingest long enough to need it and
// kept (unreferenced: it never keeps the process alive) until the store closes.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { NumberedLine } from './lines.js';
import type { PreparedLine } from './prepare.js';

/**
 * From the compiled package the worker is a .js file. From the TypeScript sources (tests,
 * benchmarks) it is a .ts file: the worker first registers tsx's loader (a development
 * dependency), which a worker does not inherit from its parent thread.
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./prepare-worker.js', import.meta.url));
  // The ESM build of tsx's API, next to the CommonJS file that require() resolves.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const main = new URL('./prepare-worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(main)}); });`, { eval: true });
}

interface Pending {
  readonly resolve: (lines: PreparedLine[]) => void;
  readonly reject: (e: Error) => void;
}

export class PreparePool {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  /** Lines prepared by the worker so far. */
  linesPrepared = 0;

  /** `logger` hears of a worker that fails (the ingest then prepares its batches itself). */
  constructor(private readonly logger?: Pick<Logger, 'warn'>) {}

  prepare(lines: readonly NumberedLine[]): Promise<PreparedLine[]> {
    let worker: Worker;
    try {
      worker = this.worker ?? this.start();
    } catch (e) {
      this.logger?.warn({ err: e }, 'The ingest worker thread could not start; batches are prepared in the ingest thread');
      return Promise.reject(e as Error);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, lines });
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
    const worker = startWorker();
    worker.on('message', (m: { id: number; prepared: PreparedLine[] }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      this.linesPrepared += m.prepared.length;
      p?.resolve(m.prepared);
    });
    const failAll = (e: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('error', (e) => {
      this.logger?.warn({ err: e }, 'The ingest worker thread failed; batches are prepared in the ingest thread until a new one starts');
      failAll(e);
    });
    worker.on('exit', (code) => failAll(new Error(`The ingest's worker thread stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
