// What keeps password checks from starving a process (the server and the cache node). A scrypt
// derivation runs on Node's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise),
// which is also where every file read, gzip of an export stream and DNS lookup runs: 64 concurrent
// wrong passwords once held all four threads of the cache node for seconds, and anonymous reads of
// an entry queued behind them. So:
//   HashGate       at most half the pool derives keys at once; a bounded queue waits; beyond it, 429.
//   FailureLimiter (the cache node) per client address, failed checks (and checks still running) within a window;
//                  at the limit, 429 with Retry-After and no hash at all.
//   The server's sign-ins (src/auth/sign-in-limits.ts) limit failures per user name and client
//   instead, and queue the checks of clients that failed behind everyone else's ('later'), so a
//   first login with the right password does not wait behind a flood of wrong ones (measured in
//   test/reliability/wrong-passwords.test.ts).

import PQueue from 'p-queue';

/** The size of libuv's thread pool, as Node reads it at start. */
export function threadPoolSize(): number {
  const n = Number(process.env['UV_THREADPOOL_SIZE']);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 4;
}

export interface HashGateOptions {
  /** Key derivations running at once (default: half the thread pool, at least 1). */
  readonly concurrency?: number;
  /** Checks waiting for a slot; one more is refused (default 64). */
  readonly maxQueued?: number;
}

/** Which queue a check waits in: 'later' ones run only when no 'first' one waits. */
export type Priority = 'first' | 'later';

export type GateResult<T> = { readonly kind: 'ran'; readonly value: T } | { readonly kind: 'busy' } | { readonly kind: 'abandoned' };

export class HashGate {
  readonly concurrency: number;
  readonly maxQueued: number;
  // p-queue runs the checks in priority order, first come first served within a priority.
  private readonly queue: PQueue;
  /** Key derivations done (every check that reached scrypt, unknown users included). */
  hashes = 0;
  /** Checks refused because the queue was full. */
  refusedBusy = 0;
  /** The most derivations that ran at once. */
  peakActive = 0;

  constructor(options: HashGateOptions = {}) {
    this.concurrency = options.concurrency ?? Math.max(1, Math.floor(threadPoolSize() / 2));
    this.maxQueued = options.maxQueued ?? 64;
    this.queue = new PQueue({ concurrency: this.concurrency });
  }

  /** Checks waiting for a slot now. */
  get waiting(): number {
    return this.queue.size;
  }

  /**
   * Runs `derive` when a slot is free: 'busy' (without running it) when the queue is full,
   * 'abandoned' when `wanted` says, once the slot is free, that nobody waits for the answer any
   * more (the client went away while queued: its derivation is skipped). A 'later' check waits
   * until no 'first' one does.
   */
  async run<T>(derive: () => Promise<T>, wanted: () => boolean = () => true, priority: Priority = 'first'): Promise<GateResult<T>> {
    if (this.queue.pending >= this.concurrency && this.queue.size >= this.maxQueued) {
      this.refusedBusy++;
      return { kind: 'busy' };
    }
    const task = async (): Promise<GateResult<T>> => {
      if (!wanted()) return { kind: 'abandoned' };
      this.peakActive = Math.max(this.peakActive, this.queue.pending);
      this.hashes++;
      return { kind: 'ran', value: await derive() };
    };
    return this.queue.add(task, { priority: priority === 'first' ? 1 : 0 });
  }
}

export interface FailureLimiterOptions {
  /** Failed (or running) checks per client within the window before 429 (default 10). */
  readonly limit?: number;
  /** The window, in milliseconds (default 60 s). */
  readonly windowMs?: number;
  readonly clock?: () => number;
}

interface ClientRecord {
  /** Times of failed checks within the window, oldest first. */
  failures: number[];
  /** Checks of this client still running. */
  running: number;
}

export type Admission = { readonly kind: 'go'; done(failed: boolean): void } | { readonly kind: 'wait'; readonly retryAfterSeconds: number };

/** Bounded memory: at most this many clients are tracked; the least recently seen go first. */
const MAX_CLIENTS = 10_000;

export class FailureLimiter {
  readonly limit: number;
  readonly windowMs: number;
  private readonly clock: () => number;
  private readonly clients = new Map<string, ClientRecord>();
  /** Checks refused with 429. */
  refused = 0;

  constructor(options: FailureLimiterOptions = {}) {
    this.limit = options.limit ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
  }

  /** Whether `client` may have one more check; if so, call done() with its outcome. */
  admit(client: string): Admission {
    const now = this.clock();
    let rec = this.clients.get(client);
    if (rec) {
      this.clients.delete(client); // re-inserted below: Map order is recency
      while (rec.failures.length > 0 && rec.failures[0]! <= now - this.windowMs) rec.failures.shift();
    } else {
      rec = { failures: [], running: 0 };
    }
    this.clients.set(client, rec);
    if (this.clients.size > MAX_CLIENTS) this.forgetOldest();
    if (rec.failures.length + rec.running >= this.limit) {
      this.refused++;
      // When the oldest failure leaves the window; checks still running end within seconds.
      const oldest = rec.failures[0];
      const ms = oldest === undefined ? 1000 : oldest + this.windowMs - now;
      return { kind: 'wait', retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
    }
    rec.running++;
    const record = rec;
    let finished = false;
    return {
      kind: 'go',
      done: (failed: boolean) => {
        if (finished) return;
        finished = true;
        record.running--;
        if (failed) record.failures.push(this.clock());
      },
    };
  }

  private forgetOldest(): void {
    for (const [client, rec] of this.clients) {
      if (this.clients.size <= MAX_CLIENTS) return;
      if (rec.running === 0) this.clients.delete(client);
    }
  }
}
