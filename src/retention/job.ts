// The retention job of `serve`: now and then it deletes the builds older than retention.maxAgeDays,
// and the oldest builds while free disk space is under retention.minFreeDiskPercent, in small
// batches (store/prune.ts) with a pause between them, so that ingest and searches go on while it
// works; and it tells the ingest route to answer 507 while free space is under
// retention.rejectBelowFreeDiskPercent.
//
// Free space on SQLite counts the database's own free pages: SQLite does not give the space of
// deleted rows back to the file system, it reuses it for new rows. Without counting them the job
// would see no gain from a deletion and go on deleting every build.

import { statfs } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabaseHandle } from '../db/database.js';
import type { Logger } from '../log.js';
import { DEFAULT_PRUNE_BATCH } from '../store/prune.js';
import type { BuildStore, PruneSelection } from '../store/types.js';
import type { RetentionConfig } from './config.js';

const DAY = 86_400_000;

export interface RetentionJobOptions {
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  /** The data directory whose disk is watched (SQLite). */
  readonly dataDir?: string;
  readonly config: RetentionConfig;
  readonly logger: Logger;
  readonly clock?: () => number;
  /** Between two runs; default 60 s. */
  readonly intervalMs?: number;
  /** Builds per deletion transaction; default 100 (DEFAULT_PRUNE_BATCH). */
  readonly batch?: number;
  /** Pause between two batches, leaving the writer to others; default 20 ms. */
  readonly pauseMs?: number;
}

export interface DiskSpace {
  /** Bytes the database can still grow into: free on the file system plus its own free pages. */
  readonly freeBytes: number;
  readonly totalBytes: number;
  readonly freePercent: number;
}

/** Free space for the database in `dir` (SQLite: with its free pages). */
export async function diskSpace(dir: string, sqlite?: DatabaseHandle['sqlite']): Promise<DiskSpace> {
  const s = await statfs(dir);
  const total = s.blocks * s.bsize;
  let free = s.bavail * s.bsize;
  if (sqlite !== undefined) free += Number(sqlite.pragma('freelist_count', { simple: true })) * Number(sqlite.pragma('page_size', { simple: true }));
  return { freeBytes: free, totalBytes: total, freePercent: total === 0 ? 100 : Math.min(100, (100 * free) / total) };
}

export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private refusing: string | undefined;
  private readonly clock: () => number;

  constructor(private readonly o: RetentionJobOptions) {
    this.clock = o.clock ?? Date.now;
  }

  /** Why ingest is refused now (free space under the reject threshold), else undefined. */
  refuseIngest = (): string | undefined => this.refusing;

  /**
   * Measures the disk (so that the ingest route knows at once whether to refuse), then runs a
   * pass in the background and one every intervalMs until stop().
   */
  async start(): Promise<void> {
    await this.measure().catch((e: unknown) => this.o.logger.error({ err: e }, 'retention: cannot measure free disk space'));
    void this.tick().finally(() => this.schedule());
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.tick().finally(() => this.schedule());
    }, this.o.intervalMs ?? 60_000);
    this.timer.unref();
  }

  private tick(): Promise<void> {
    this.running ??= this.runOnce()
      .catch((e: unknown) => this.o.logger.error({ err: e }, 'retention: run failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** One pass: age, then disk space. Resolves when done (or stopped). */
  async runOnce(): Promise<void> {
    const { config, logger } = this.o;
    if (config.maxAgeDays !== undefined) {
      const instant = this.clock() - config.maxAgeDays * DAY;
      await this.deleteWhile({ kind: 'startedBefore', instant }, async () => true, `builds that started before ${new Date(instant).toISOString()} (retention.maxAgeDays ${config.maxAgeDays})`);
    }
    const min = config.minFreeDiskPercent;
    if (min !== undefined) {
      const low = async () => (await this.measure()).freePercent < min;
      if (await low()) {
        const n = await this.deleteWhile({ kind: 'oldest' }, low, `oldest builds while free disk space is under ${min}% (retention.minFreeDiskPercent)`);
        const after = await this.measure();
        if (after.freePercent < min) logger.warn({ freePercent: round(after.freePercent), deleted: n }, `retention: free disk space is still ${round(after.freePercent)}% (under ${min}%) with no build left to delete`);
      }
    }
    await this.measure();
  }

  /** Free space now; updates whether ingest is refused. */
  private async measure(): Promise<DiskSpace> {
    const { config, dataDir, logger } = this.o;
    if (dataDir === undefined || (config.minFreeDiskPercent === undefined && config.rejectBelowFreeDiskPercent === undefined)) {
      return { freeBytes: 0, totalBytes: 0, freePercent: 100 };
    }
    const space = await diskSpace(dataDir, this.o.database.sqlite);
    const reject = config.rejectBelowFreeDiskPercent;
    const was = this.refusing;
    this.refusing =
      reject !== undefined && space.freePercent < reject
        ? `Free disk space of the build store is ${round(space.freePercent)}%, under retention.rejectBelowFreeDiskPercent (${reject}%): builds are not accepted now; send them again later`
        : undefined;
    if (this.refusing !== undefined && was === undefined) logger.warn({ freePercent: round(space.freePercent), reject }, 'retention: refusing ingest (507) until disk space is freed');
    if (this.refusing === undefined && was !== undefined) logger.info({ freePercent: round(space.freePercent) }, 'retention: accepting ingest again');
    return space;
  }

  /** Deletes batches of `selection` while `more()` holds; returns how many builds went. */
  private async deleteWhile(selection: PruneSelection, more: () => Promise<boolean>, what: string): Promise<number> {
    const { store, logger } = this.o;
    const batch = this.o.batch ?? DEFAULT_PRUNE_BATCH;
    let deleted = 0;
    let lastLog = performance.now();
    const started = lastLog;
    while (!this.stopped && (await more())) {
      const gone = await store.deleteBuilds(selection, batch);
      if (gone.length === 0) break;
      if (deleted === 0) logger.info({ selection: selection.kind }, `retention: deleting ${what}`);
      deleted += gone.length;
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        logger.info({ deleted }, `retention: ${deleted} builds deleted so far`);
      }
      await sleep(this.o.pauseMs ?? 20);
    }
    if (deleted > 0) logger.info({ deleted, ms: Math.round(performance.now() - started) }, `retention: deleted ${deleted} ${what}`);
    return deleted;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }
}

const round = (p: number): number => Math.round(p * 10) / 10;
