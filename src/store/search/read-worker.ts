// Worker thread of the search read pool (read-pool.ts): runs compiled search statements on its own
// read-only connection to the store's SQLite database (WAL: readers never wait for the writer), so
// a slow search occupies this thread, not the server's.
//
// better-sqlite3 has no progress handler, so a search statement calls `buildscope_deadline()`
// first in its WHERE clause, once per row it visits: after the job's deadline the function throws,
// which stops the statement where it stands.

import BetterSqlite3 from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { packedBuffers, packRows } from './packed-rows.js';
import { DEADLINE_FUNCTION, type ReadForm } from './read-pool.js';
import { assertNever } from '../../query/assert.js';
import { foldedBuffers, foldPacks } from '../events/test-packs.js';
import { bindSeqSets, defineSeqSetFunction } from './seq-set.js';

interface Job {
  readonly id: number;
  readonly sql: string;
  readonly parameters: readonly unknown[];
  /** Epoch ms after which the statement is stopped. */
  readonly deadline: number;
  readonly form: ReadForm;
}

const TIMEOUT = 'search deadline passed';

const db = new BetterSqlite3((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -32768');
let deadline = Infinity;
db.function(DEADLINE_FUNCTION, { deterministic: false }, () => {
  if (Date.now() > deadline) throw new Error(TIMEOUT);
  return 1;
});

// A statement testing a set of seqs leaves out the deadline check: the set's function checks.
defineSeqSetFunction(db, () => {
  if (Date.now() > deadline) throw new Error(TIMEOUT);
});

// Prepared statements by text (a page's statement repeats with other parameters), at most 200.
const statements = new Map<string, BetterSqlite3.Statement>();

parentPort!.on('message', (job: Job) => {
  deadline = job.deadline;
  const { parameters, release } = bindSeqSets(job.parameters);
  try {
    let stmt = statements.get(job.sql);
    if (stmt === undefined) {
      if (statements.size >= 200) statements.delete(statements.keys().next().value!);
      stmt = db.prepare(job.sql);
      statements.set(job.sql, stmt);
    }
    switch (job.form) {
      case 'rows':
        parentPort!.postMessage({ id: job.id, answer: stmt.raw(false).all(...parameters) });
        break;
      case 'packed': {
        const packed = packRows(stmt.raw(true).iterate(...parameters) as Iterable<unknown[]>, stmt.columns().length);
        parentPort!.postMessage({ id: job.id, answer: packed }, packedBuffers(packed));
        break;
      }
      case 'failureGroups':
      case 'both': {
        const folded = foldPacks(job.form, stmt.raw(true).iterate(...parameters) as Iterable<unknown[]>);
        parentPort!.postMessage({ id: job.id, answer: folded }, foldedBuffers(folded));
        break;
      }
      default:
        assertNever(job.form, 'read form');
    }
  } catch (e) {
    const message = (e as Error).message;
    parentPort!.postMessage({ id: job.id, error: message, timeout: message === TIMEOUT });
  } finally {
    release();
    deadline = Infinity;
  }
});
