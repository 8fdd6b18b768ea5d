// The evaluation pool: at most `size` evaluations run at once and at most `queue` wait; beyond
// that a request is refused at once (429) instead of piling up latency for everyone.

export class PoolExhaustedError extends Error {
  override readonly name = 'PoolExhaustedError';
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
      if (this.waiting.length >= this.queue) throw new PoolExhaustedError('evaluation pool exhausted');
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
