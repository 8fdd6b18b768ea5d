// NDJSON ingest (see the event model and docs/store.md). The input is read as a stream of lines
// in parts (BULK_PART_LINES lines in a bulk load, else a transaction's worth); each part is
// prepared without the database (prepare.ts: parsed, validated, encoded, derived; in a worker
// thread for long inputs, prepare-pool.ts, part-queue.ts), planned against the stored state (ingest/plan.ts)
// and written by the dialect's write path (ingest/sqlite.ts, ingest/postgres.ts) inside a
// transaction of up to `batchSize` lines. Only a few parts are in memory at a time, however large
// the transaction or the input. Each part is written under a savepoint: if it fails in the
// database, its lines are written again one per savepoint, so one bad build cannot take the
// others down. A bulk load on SQLite saves the savepoints' cost instead: it keeps the open
// transaction's lines aside (transaction-lines.ts), and when a part fails, rolls the transaction
// back and writes them all again that way. Results are reported only after their transaction
// committed.

import { batchSizeFor } from './batches.js';
import { spaceCheckpoints } from './bulk-checkpoints.js';
import { sqliteWriter } from './sqlite.js';
import { postgresWriter } from './postgres.js';
import { numberedLineChunks, type NumberedLine } from './lines.js';
import { PartQueue } from './part-queue.js';
import { prepareLines, type PreparedLine } from './prepare.js';
import { transactionLines, type TransactionLines } from './transaction-lines.js';
import type { IngestContext, IngestWriter, PartWritten, WriterOptions } from './writer.js';
import type { IngestLineResult, IngestOptions } from '../types.js';
import type { DialectName } from '../../db/database.js';

/** Each database's write path (every database named, checked by the type). */
const WRITERS: Readonly<Record<DialectName, (ctx: IngestContext, options: WriterOptions) => IngestWriter>> = { sqlite: sqliteWriter, postgres: postgresWriter };

export { NOTIFY_CHANNEL } from './postgres.js';

export type { IngestContext, IngestWriter, PartWritten, SearchBatch, WriterOptions } from './writer.js';

/**
 * Lines prepared, planned and written together in a bulk load (a bulk SQLite transaction of 10,000
 * lines is a hundred parts). Smaller parts keep less in memory: `buildscope ingest` of 30,000 demo
 * builds peaked at 371 MB RSS with parts of 500 lines, 315 MB with 250 and 234 MB with 100, at
 * the same rate within the noise of a shared machine. Other ingests (the server's) write each
 * transaction as one part, in one synchronous call on SQLite, so nothing else on the connection
 * runs inside it.
 */
export const BULK_PART_LINES = 100;

/**
 * Parts prepared ahead of the one being written. Two keep the worker busy while this thread
 * both writes a part and reads the input for the next.
 */
const PREPARED_AHEAD = 2;

/** How long the input may stall before what was read of it is written and committed. */
const IDLE_COMMIT_MS = 200;

/** The promise's value, or undefined when it takes longer than IDLE_COMMIT_MS. */
async function beforeIdle<T>(p: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<undefined>((r) => (timer = setTimeout(r, IDLE_COMMIT_MS, undefined)));
  try {
    return await Promise.race([p, idle]);
  } finally {
    clearTimeout(timer);
  }
}

export async function ingestNdjson(
  ctx: IngestContext,
  input: string | AsyncIterable<string | Uint8Array>,
  options: IngestOptions = {},
): Promise<IngestLineResult[]> {
  const writerOptions: WriterOptions = { visibility: options.visibility };
  const writer = WRITERS[ctx.handle.dialect](ctx, writerOptions);
  // A bulk load on SQLite spaces its checkpoints out (bulk-checkpoints.ts), and writes its parts
  // without a savepoint each, keeping the open transaction's lines aside instead, to write them
  // again should a part fail (transaction-lines.ts says why). Everywhere else each part has its
  // savepoint.
  const bulkSqlite = options.bulk === true ? ctx.handle.sqlite : undefined;
  const checkpoints = bulkSqlite === undefined ? undefined : spaceCheckpoints(bulkSqlite);
  const batchSize = options.batchSize ?? batchSizeFor(ctx.handle.dialect, options.bulk === true);
  const partSize = options.bulk === true ? Math.min(batchSize, BULK_PART_LINES) : batchSize;
  const keep = options.keepResults !== false;
  const all: IngestLineResult[] = [];
  let done = 0;

  // Parts are prepared (parsed, validated, encoded, derived) ahead of their writing, so that
  // preparing one in the worker thread overlaps writing another (part-queue.ts says who prepares
  // which).
  const bounds = ctx.outputBounds;
  const here = (lines: readonly NumberedLine[]): PreparedLine[] => prepareLines(lines, bounds);
  const pool = ctx.pool;
  // Should the worker fail or refuse the part (a line too long for its heap, prepare-pool.ts), the
  // part is prepared here instead: same function, same results.
  const worker = pool === undefined ? undefined : (lines: readonly NumberedLine[]) => pool.prepare(lines, bounds).catch(() => here(lines));
  const ahead = new PartQueue({ here, worker, share: options.bulk === true });

  let aside = bulkSqlite === undefined ? undefined : transactionLines();
  const setAside = (texts: readonly NumberedLine[]): void => {
    try {
      aside?.add(texts);
    } catch {
      // No room for them (a full temporary disk): the rest of the load takes savepoints. The parts
      // before were written whole, so nothing needs writing again.
      aside?.close();
      aside = undefined;
    }
  };

  // Lines written in the open transaction so far and their results (reported at commit).
  let inTx = 0;
  let pending: IngestLineResult[] = [];
  let pendingMaxSeq = 0;

  const report = (out: IngestLineResult[], maxSeq: number): void => {
    if (maxSeq > 0) ctx.onAvailable(maxSeq);
    done += out.length;
    options.onResults?.(out);
    options.onProgress?.(done);
    if (keep) for (const r of out) all.push(r);
  };
  /** The transaction ended: its results, and the highest seq it stored. */
  const ended = (): [IngestLineResult[], number] => {
    const out: [IngestLineResult[], number] = [pending, pendingMaxSeq];
    pending = [];
    pendingMaxSeq = 0;
    inTx = 0;
    aside?.clear();
    return out;
  };
  const committed = (): void => {
    const [out, maxSeq] = ended();
    checkpoints?.grown();
    report(out, maxSeq);
  };
  const failed = (e: unknown): void => {
    // Nothing of the transaction was stored: every line of it that would have been says so.
    const [out] = ended();
    report(
      out.map((r) => (r.status === 'rejected' ? r : notStored(r.line, r.buildId, e))),
      0,
    );
  };
  const took = (w: PartWritten): void => {
    pending.push(...w.results);
    pendingMaxSeq = Math.max(pendingMaxSeq, w.maxSeq);
  };
  const commit = async (): Promise<void> => {
    if (inTx === 0) return;
    try {
      await writer.commit();
      committed();
    } catch (e) {
      await writer.rollback().catch(() => undefined);
      failed(e);
    }
  };

  /** Writes the next part; commits after it when the transaction is full or `end` (no part follows now). */
  const writeNext = async (end = false): Promise<void> => {
    const part = await ahead.next();
    if (part.lines.length > 0) await writeNow(part.texts, part.lines, end);
    else if (end) await commit();
  };

  const writeNow = async (texts: readonly NumberedLine[], lines: readonly PreparedLine[], end: boolean): Promise<void> => {
    const last = end || inTx + lines.length >= batchSize;
    inTx += lines.length;
    setAside(texts);
    try {
      took(await writer.part(lines, last, aside === undefined));
      if (last) committed();
      return;
    } catch (partError) {
      if (aside === undefined) await writeApart(lines, partError);
      else await writeAgain(aside);
    }
    if (last) await commit();
  };

  /** A part that failed under its savepoint left nothing behind: its lines one by one, so that only the line that fails is refused. */
  const writeApart = async (lines: readonly PreparedLine[], partError: unknown): Promise<void> => {
    if (lines.length === 1) {
      pending.push(notStored(lines[0]!.line, lines[0]!.prepared.buildId, partError));
      return;
    }
    for (const l of lines) {
      try {
        took(await writer.part([l], false, true));
      } catch (e) {
        pending.push(notStored(l.line, l.prepared.buildId, e));
      }
    }
  };

  /**
   * A part failed without a savepoint and may have left some of its rows: the transaction is
   * rolled back and its lines, set aside, written again from the first, each part under a
   * savepoint (the rollback took the parts before the failing one with it).
   */
  const writeAgain = async (lines: TransactionLines): Promise<void> => {
    await writer.rollback();
    pending = [];
    pendingMaxSeq = 0;
    for await (const texts of lines.parts(partSize)) {
      const prepared = await (worker ?? here)(texts);
      try {
        took(await writer.part(prepared, false, true));
      } catch (e) {
        await writeApart(prepared, e);
      }
    }
  };

  /** Writes every part read and commits with the last: nothing more is read before that. */
  const writeAll = async (): Promise<void> => {
    while (ahead.length > 0) await writeNext(ahead.length === 1);
    await commit();
  };

  const it = numberedLineChunks(input)[Symbol.asyncIterator]();
  let texts: NumberedLine[] = [];
  try {
    for (;;) {
      const next = it.next();
      // The input stalls (a slow sender): what was read is written and committed now, so that the
      // transaction never holds the write lock waiting for input, and what was sent is listed.
      let got = await beforeIdle(next);
      if (got === undefined) {
        if (texts.length > 0) ahead.push(texts);
        texts = [];
        await writeAll();
        got = await next;
      }
      if (got.done === true) break;
      for (const l of got.value) {
        texts.push(l);
        if (texts.length < partSize) continue;
        ahead.push(texts);
        texts = [];
        while (ahead.length > PREPARED_AHEAD) await writeNext();
      }
    }
    if (texts.length > 0) ahead.push(texts);
    await writeAll();
  } finally {
    // An input that fails (a broken stream) leaves no transaction open; what was written of it
    // and not committed is not reported, so not stored.
    await writer.rollback().catch(() => undefined);
    aside?.close();
    checkpoints?.end();
  }
  return all;
}

function notStored(line: number, buildId: string | undefined, e: unknown): IngestLineResult {
  return {
    line,
    status: 'rejected',
    path: '$',
    error: `The build could not be stored: ${(e as Error).message}`,
    ...(buildId !== undefined ? { buildId } : {}),
  };
}
