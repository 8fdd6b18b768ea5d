// The one guarded path of searches. Every read of builds by a query (a listing or a page of a
// streamed one, a count, facets, trends, the values of a field) runs its statements here, under
// the search time limit:
//
// - SQLite: in the search threads (read-pool.ts), each statement stopped at the deadline by the
//   deadline check it carries first in its WHERE clause, so the server's thread never runs it;
// - PostgreSQL: in a transaction on one pooled connection, each statement after a `SET LOCAL
//   statement_timeout` of the time left, within the search slots (search-slots.ts): a search holds
//   one connection whatever its statements, and searches never hold every pooled connection.
//
// A search may be several statements (a trend is three, a page read in windows of seq up to
// three; the facets are one): they share one deadline, counted from when the search was asked
// for, so the whole search ends within the limit whatever it is made of, and it fails with the
// same SearchTimeoutError as a listing.

import { sql, type CompiledQuery, type RawBuilder, type SqlBool } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/database.js';
import type { Dialect } from '../../sql/index.js';
import { packRows, type PackedRows } from './packed-rows.js';
import { DEADLINE_FUNCTION, ReadPool, SearchThreadError, SearchTimeoutError } from './read-pool.js';
import { SearchSlots } from './search-slots.js';
import { bindSeqSets, defineSeqSetFunction } from './seq-set.js';
import { foldPacks, type PackFold, type PackFolds } from '../events/test-packs.js';
import { FoldThread } from './fold-thread.js';
import { readCopied } from './pg-copy.js';

/**
 * PostgreSQL: threads that fold test packs (fold-thread.ts), the idlest taking the next fold. A
 * range's fold (5,000 builds, a million executions) takes about 25 ms of a core and its read half
 * that: with one thread, folds queued behind each other; with two, `tag:CI`'s page at 20 million
 * executions went from 632 and 543 ms to 563 and 405 (medians of 8, two runs each).
 */
const FOLD_THREADS = 2;

/** Runs one statement of a search within the search's time limit; its rows. */
export type ReadRows = <R>(query: CompiledQuery<R>) => Promise<R[]>;

/** As ReadRows, the rows packed column by column (packed-rows.ts); `width` is the number of columns selected. */
export type ReadPacked = (query: CompiledQuery, width: number) => Promise<PackedRows>;

/**
 * The fold `fold` of the test packs a statement selects (events/test-packs.ts): folded in a search
 * thread, so the packs never reach the server's thread where there are threads.
 */
export type ReadFolded = <F extends PackFold>(query: CompiledQuery, fold: F) => Promise<PackFolds[F]>;

/** Folds rows read as objects (their values in select order), where no search thread folded them. */
async function folded<F extends PackFold>(rows: Promise<readonly unknown[]>, fold: F): Promise<PackFolds[F]> {
  return foldPacks(fold, (await rows).map((r) => Object.values(r as object)));
}

/** Packs rows read as objects (their values in select order), where no search thread packed them. */
async function packed(rows: Promise<readonly unknown[]>, width: number): Promise<PackedRows> {
  return packRows((await rows).map((r) => Object.values(r as object)), width);
}

/** What a search needs of the guard: the run of its statements, and the check they carry. */
export interface GuardedSearch {
  /**
   * The condition to put first in the WHERE clause of a search statement over builds, so that a
   * search thread can stop it between rows; undefined when searches do not run in threads.
   */
  readonly deadlineCheck: RawBuilder<SqlBool> | undefined;
  /**
   * Runs `f`, whose statements (read through `read`, `readPacked` or `readFolded`) all end by
   * one deadline: the search time limit, or `timeoutMs` for work that is not a request's (a
   * background read).
   */
  search<T>(f: (read: ReadRows, readPacked: ReadPacked, readFolded: ReadFolded) => Promise<T>, options?: { readonly timeoutMs?: number }): Promise<T>;
}

export interface SearchGuardOptions {
  /** The time limit of one search, in ms. */
  readonly timeoutMs: number;
  /** SQLite: search threads; 0 runs searches in the caller's thread without a limit. */
  readonly threads: number;
  readonly logger?: Logger;
}

/** A search run straight on the database, without a limit (tests and benchmarks compare paths with it). */
export function unguarded(handle: DatabaseHandle): GuardedSearch {
  const read = inThisThread(handle);
  return { deadlineCheck: undefined, search: (f) => f(read, (q, width) => packed(read(q), width), (q, fold) => folded(read(q), fold)) };
}

/** Statements run on the database's own connection, in this thread (a set of seqs bound as seq-set.ts does). */
function inThisThread(handle: DatabaseHandle): ReadRows {
  if (handle.sqlite !== undefined) defineSeqSetFunction(handle.sqlite);
  return async <R>(q: CompiledQuery<R>) => {
    const { parameters, release } = bindSeqSets(q.parameters);
    try {
      return (await handle.db.executeQuery<R>({ ...q, parameters })).rows;
    } finally {
      release();
    }
  };
}

export class SearchGuard implements GuardedSearch {
  private readonly reads: ReadPool | undefined;
  /** PostgreSQL: searches at a time, so that some pooled connections stay free for everything else. */
  private readonly slots: SearchSlots | undefined;
  /** PostgreSQL: where the test packs a search reads are folded (fold-thread.ts). */
  private readonly folds: readonly FoldThread[] | undefined;
  readonly deadlineCheck: RawBuilder<SqlBool> | undefined;
  /** Statements run in the server's thread: where there are no search threads, or one failed. */
  private readonly here: ReadRows;

  constructor(
    private readonly handle: DatabaseHandle,
    dialect: Dialect,
    private readonly options: SearchGuardOptions,
  ) {
    const sqlite = handle.sqlite;
    this.reads = dialect.searchExecution === 'threads' && sqlite !== undefined && !sqlite.memory && options.threads > 0 ? new ReadPool(sqlite.name, options.threads, options.logger) : undefined;
    if (this.reads !== undefined) {
      this.deadlineCheck = sql<SqlBool>`${sql.raw(DEADLINE_FUNCTION)}() = 1`;
      // Should a search thread fail, the statement runs in the server's thread instead, as it
      // is: the deadline check then always passes.
      sqlite!.function(DEADLINE_FUNCTION, { deterministic: false }, () => 1);
    }
    this.here = inThisThread(handle);
    // Two connections of the pool (10 by default) are never taken by searches.
    this.slots = dialect.searchExecution === 'slots' && handle.pool !== undefined ? new SearchSlots(Math.max(1, (handle.pool.options.max ?? 10) - 2)) : undefined;
    this.folds = this.slots === undefined ? undefined : Array.from({ length: FOLD_THREADS }, () => new FoldThread(options.logger));
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  async search<T>(f: (read: ReadRows, readPacked: ReadPacked, readFolded: ReadFolded) => Promise<T>, options: { readonly timeoutMs?: number } = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const left = (): number => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new SearchTimeoutError(timeoutMs);
      return ms;
    };
    try {
      if (this.reads !== undefined) return await f((q) => this.inThread(q, left()), (q, width) => this.packedInThread(q, width, left()), (q, fold) => this.foldedInThread(q, fold, left()));
      if (this.slots !== undefined) return await this.inSlot((read, readCopy) => f(read, (q, width) => packed(read(q), width), (q, fold) => this.foldedAside(readCopy(q), fold)), left);
      return await f(this.here, (q, width) => packed(this.here(q), width), (q, fold) => folded(this.here(q), fold));
    } catch (e) {
      // Whichever part ran out of time (a statement, a wait for a thread or a slot), the caller
      // is told the limit, not what was left of it.
      if (e instanceof SearchTimeoutError || (e as { code?: unknown }).code === '57014') throw new SearchTimeoutError(timeoutMs);
      throw e;
    }
  }

  /** SQLite: the statement in a search thread, stopped after `leftMs` (waiting for a thread included). */
  private async inThread<R>(q: CompiledQuery<R>, leftMs: number): Promise<R[]> {
    try {
      return (await this.reads!.run(q.sql, q.parameters, leftMs)) as R[];
    } catch (e) {
      if (!(e instanceof SearchThreadError)) throw e;
      this.options.logger?.warn({ err: e }, 'A search thread failed; this search runs in the server thread');
      return this.here(q);
    }
  }

  /** As inThread, the rows packed in the search thread. */
  private async packedInThread(q: CompiledQuery, width: number, leftMs: number): Promise<PackedRows> {
    try {
      return await this.reads!.runPacked(q.sql, q.parameters, leftMs);
    } catch (e) {
      if (!(e instanceof SearchThreadError)) throw e;
      this.options.logger?.warn({ err: e }, 'A search thread failed; this search runs in the server thread');
      return packed(this.here(q), width);
    }
  }

  /** As inThread, the test packs folded in the search thread. */
  private async foldedInThread<F extends PackFold>(q: CompiledQuery, fold: F, leftMs: number): Promise<PackFolds[F]> {
    try {
      return await this.reads!.runFolded(q.sql, q.parameters, leftMs, fold);
    } catch (e) {
      if (!(e instanceof SearchThreadError)) throw e;
      this.options.logger?.warn({ err: e }, 'A search thread failed; this search runs in the server thread');
      return folded(this.here(q), fold);
    }
  }

  /** PostgreSQL: the test packs a statement read (one pack stream), folded in the fold thread (in this one should it fail). */
  private async foldedAside<F extends PackFold>(stream: Promise<Uint8Array>, fold: F): Promise<PackFolds[F]> {
    const rows = [[await stream]];
    try {
      const idlest = this.folds!.reduce((a, b) => (b.folding < a.folding ? b : a));
      return await idlest.fold(rows, fold);
    } catch (e) {
      this.options.logger?.warn({ err: e }, 'The test packs fold thread failed; this fold runs in the server thread');
      return foldPacks(fold, rows);
    }
  }

  /**
   * PostgreSQL: the search in one slot and one transaction on one pooled connection, its
   * statements one at a time (a connection runs one statement at a time anyway), each after
   * setting statement_timeout to what is left, so the connection is given back by the deadline.
   * Error 57014 (query_canceled) is the timeout firing; search() turns it into SearchTimeoutError.
   * After a failed statement the transaction is aborted: later statements of the search fail
   * without being sent. The connection is pg's own, not Kysely's, for the test packs' binary COPY
   * (pg-copy.ts); a statement runs on it as Kysely's PostgreSQL driver runs one.
   */
  private inSlot<T>(f: (read: ReadRows, readCopy: (q: CompiledQuery) => Promise<Uint8Array>) => Promise<T>, left: () => number): Promise<T> {
    return this.slots!.run(left(), async () => {
      const client = await this.handle.pool!.connect();
      let last: Promise<unknown> = Promise.resolve();
      let failure: unknown;
      const inTurn = <R>(run: () => Promise<R>): Promise<R> => {
        const next = last.then(async () => {
          if (failure !== undefined) throw failure;
          await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(left()))}`);
          return run();
        });
        last = next.catch((e: unknown) => {
          failure ??= e;
        });
        return next;
      };
      // A connection that could not begin or end its transaction is closed, not given back.
      let broken: Error | undefined;
      try {
        // No JIT compilation of the search's statements. PostgreSQL compiles a statement whose
        // estimated cost passes jit_above_cost, and cannot be interrupted while it compiles: the
        // facets of 100 negated terms over 16,000 builds, limited to 300 ms, were cancelled after
        // 3.5-4.7 s with it and after about 300 ms without; run to the end, 10.5 s with it and
        // about 3 s without (docs/store.md, "Search time limit and search threads").
        await client.query('BEGIN; SET LOCAL jit = off');
      } catch (e) {
        client.release(e as Error);
        throw e;
      }
      try {
        const result = await f(
          async <R>(q: CompiledQuery<R>) => inTurn(async () => (await client.query(q.sql, [...q.parameters])).rows as R[]),
          (q) => inTurn(() => readCopied(client, q)),
        );
        await last;
        await client.query('COMMIT');
        return result;
      } catch (e) {
        // Nothing may use the transaction after it ends.
        await last;
        await client.query('ROLLBACK').catch((rollback: Error) => {
          broken = rollback;
        });
        throw e;
      } finally {
        client.release(broken);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.folds?.map((t) => t.close()) ?? []);
    await this.reads?.close();
  }
}
