// The bound on concurrent writes of Bazel's protocols. Each write holds a file handle and a
// temporary file (and a BatchUpdateBlobs request its whole body in memory) until it is done; a
// build with thousands of outputs and a high --remote_max_connections, or several CI machines at
// once, would otherwise open handles until the process runs out. Writes beyond the bound are
// refused at once with a retry hint (429 / RESOURCE_EXHAUSTED) rather than queued: Bazel retries
// them, and a queue would hold the same memory in request bodies.

export const DEFAULT_MAX_CONCURRENT_WRITES = 64;
/** What a refused write is told to wait before it tries again. */
export const RETRY_AFTER_SECONDS = 1;

export class WriteSlots {
  active = 0;
  peak = 0;

  constructor(readonly limit: number = DEFAULT_MAX_CONCURRENT_WRITES) {}

  /** A release function, or null when every slot is taken. Release exactly once. */
  tryAcquire(): (() => void) | null {
    if (this.active >= this.limit) return null;
    this.active++;
    if (this.active > this.peak) this.peak = this.active;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
    };
  }
}
