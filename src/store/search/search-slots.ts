// At most `size` searches at a time, each waiting no longer than its deadline for its turn. On
// PostgreSQL a search holds a pooled connection while it runs; with every connection held by slow
// searches, every other request (a build by ID, a listing without a query, ingest) would wait for
// one too. Leaving some connections to them keeps their latency whatever the searches do.

import { SearchTimeoutError } from './read-pool.js';

interface Waiter {
  readonly grant: () => void;
  readonly timer: NodeJS.Timeout;
}

export class SearchSlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly size: number) {}

  /** Runs `f` when a slot is free; SearchTimeoutError when none is free within `timeoutMs`. */
  async run<T>(timeoutMs: number, f: (leftMs: number) => Promise<T>): Promise<T> {
    const start = Date.now();
    if (this.running >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          grant: () => {
            clearTimeout(waiter.timer);
            resolve();
          },
          timer: setTimeout(() => {
            this.waiting.splice(this.waiting.indexOf(waiter), 1);
            reject(new SearchTimeoutError(timeoutMs));
          }, timeoutMs),
        };
        this.waiting.push(waiter);
      });
    } else this.running++;
    try {
      return await f(Math.max(1, timeoutMs - (Date.now() - start)));
    } finally {
      // Hand the slot on, or give it back.
      const next = this.waiting.shift();
      if (next !== undefined) next.grant();
      else this.running--;
    }
  }
}
