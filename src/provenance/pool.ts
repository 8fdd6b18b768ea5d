// The evaluation pool: at most `size` evaluations run at once and at most `queue` wait; beyond
// that a request is refused at once (429) instead of piling up latency for everyone.

import { DomainError } from '../errors/domain.js';
import { DETAILS } from './errors.js';

/** Answered 429 with the seed's detail and Retry-After: 1. */
export class PoolExhaustedError extends DomainError {
  readonly kind = 'too-many';
  constructor() {
    super(DETAILS.tooMany, { retryAfterSeconds: 1 });
  }
}

export class EvaluationPool {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    readonly queue: number,
  ) {}

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `task` in the pool; throws PoolExhaustedError when both the pool and its queue are full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) {
      if (this.waiting.length >= this.queue) throw new PoolExhaustedError();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays counted.
      if (next) next();
      else this.active--;
    }
  }
}
