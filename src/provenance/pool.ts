// The evaluation pool: at most `size` evaluations run at once and at most `queue` wait; beyond
// that a request is refused at once (429) instead of piling up latency for everyone.

import PQueue from 'p-queue';

export class PoolExhaustedError extends Error {
  override readonly name = 'PoolExhaustedError';
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
    if (this.tasks.pending >= this.size && this.tasks.size >= this.queue) throw new PoolExhaustedError('evaluation pool exhausted');
    return this.tasks.add(task);
  }
}
