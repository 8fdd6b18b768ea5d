// The evaluation pool: at most `size` evaluations run at once and at most `queue` wait; beyond
// that a request is refused at once (429) instead of piling up latency for everyone.

import PQueue from 'p-queue';
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
  private readonly tasks: PQueue;

  constructor(
    readonly size: number,
    readonly queue: number,
  ) {
    this.tasks = new PQueue({ concurrency: size });
  }

  get running(): number {
    return this.tasks.pending;
  }

  get queued(): number {
    return this.tasks.size;
  }

  /** Runs `task` in the pool; throws PoolExhaustedError when both the pool and its queue are full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.tasks.pending >= this.size && this.tasks.size >= this.queue) throw new PoolExhaustedError();
    return this.tasks.add(task);
  }
}
