// Waiting for new builds. Ingest in this process signals after its commit; on PostgreSQL a
// dedicated client LISTENs so that builds stored by other server processes wake waiters too.
// A slow poll of max(seq) backs both up (a lost connection, another process on one SQLite file).

import pg from 'pg';
import type { Logger } from 'pino';

interface Waiter {
  readonly afterSeq: number;
  readonly resolve: (v: boolean) => void;
}

export class NewBuildSignal {
  private readonly waiters = new Set<Waiter>();
  private known = 0;
  private poll: NodeJS.Timeout | undefined;
  private polling = false;
  private client: pg.Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly latestSeq: () => Promise<number>,
    private readonly logger?: Logger,
    private readonly pollMs = 1000,
  ) {}

  /** Callers waiting for a new build right now (long-polls, export streams that sent everything). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Builds up to `seq` are available (called after a commit, or on a notification). */
  signal(seq: number): void {
    if (seq > this.known) this.known = seq;
    for (const w of [...this.waiters]) {
      if (seq > w.afterSeq) {
        this.waiters.delete(w);
        w.resolve(true);
      }
    }
    if (this.waiters.size === 0) this.stopPoll();
  }

  async wait(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || signal?.aborted) return false;
    const current = await this.latestSeq();
    this.signal(current);
    if (current > afterSeq) return true;
    if (this.closed || signal?.aborted) return false;
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (v: boolean): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(waiter);
        if (this.waiters.size === 0) this.stopPoll();
        resolve(v);
      };
      const onAbort = (): void => done(false);
      const waiter: Waiter = { afterSeq, resolve: done };
      this.waiters.add(waiter);
      timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.startPoll();
    });
  }

  private startPoll(): void {
    if (this.poll !== undefined || this.closed) return;
    this.poll = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      this.latestSeq()
        .then((s) => this.signal(s))
        .catch((e: unknown) => this.logger?.warn({ err: e }, 'polling for new builds failed'))
        .finally(() => (this.polling = false));
    }, this.pollMs);
    this.poll.unref();
  }

  private stopPoll(): void {
    if (this.poll !== undefined) clearInterval(this.poll);
    this.poll = undefined;
  }

  /** LISTENs on `channel` with its own connection (not from the pool: LISTEN is per session). */
  async listen(config: pg.ClientConfig, channel: string): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(config);
    client.on('notification', (n) => {
      const seq = Number(n.payload);
      if (Number.isFinite(seq)) this.signal(seq);
    });
    client.on('error', (e) => {
      this.logger?.warn({ err: e }, 'build notification connection lost; reconnecting');
      this.retry(config, channel);
    });
    client.on('end', () => this.retry(config, channel));
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
      this.client = client;
    } catch (e) {
      this.logger?.warn({ err: e }, 'could not listen for new builds; polling');
      client.end().catch(() => undefined);
      this.retry(config, channel);
    }
  }

  private retry(config: pg.ClientConfig, channel: string): void {
    if (this.closed || this.reconnect !== undefined) return;
    this.client = undefined;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      void this.listen(config, channel);
    }, 1000);
    this.reconnect.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopPoll();
    if (this.reconnect !== undefined) clearTimeout(this.reconnect);
    for (const w of [...this.waiters]) w.resolve(false);
    this.waiters.clear();
    const c = this.client;
    this.client = undefined;
    if (c !== undefined) {
      c.removeAllListeners('end');
      c.removeAllListeners('error');
      c.on('error', () => undefined);
      await c.end().catch(() => undefined);
    }
  }
}
