// Converts the event chunks and attributes stored before store migration 0008 to the compressed
// form (event-codec.ts packEvents, packAttributes), in batches of 500 rows, each its own
// transaction, with progress in the log. Runs when the store opens, after the migrations; a
// database with nothing left to convert costs one look-up in each partial index of the
// unconverted rows (build_events_text, build_attributes_text). Rows are visited in that index's
// order from where the last batch ended, so each batch is a range read whatever the size of the
// table. Several processes may convert at once: a row is only updated while still unconverted.

import type { Logger } from 'pino';
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/database.js';
import { packAttributes, packEvents } from '../events/event-codec.js';

const BATCH = 500;
/** Progress is logged at most this often (ms), besides the first and the last line. */
const LOG_EVERY_MS = 5000;

export interface CompactProgress {
  readonly table: 'build_events' | 'build_attributes';
  readonly done: number;
  readonly of: number;
}

// Untyped: one conversion loop serves two tables (build_events, build_attributes) whose columns
// it names from a table descriptor, which the typed database cannot follow.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Compresses every chunk and attributes row still stored as text; returns how many rows were converted. */
export async function compactStoredEvents(handle: DatabaseHandle, logger?: Logger, onProgress?: (p: CompactProgress) => void): Promise<number> {
  const chunks = await convert(handle.db, handle.dialect === 'sqlite' ? SQLITE_EVENTS : TABLES.build_events, 'build_events', logger, onProgress);
  const attributes = await convert(handle.db, TABLES.build_attributes, 'build_attributes', logger, onProgress);
  return chunks + attributes;
}

interface Table {
  readonly what: string;
  readonly text: string;
  readonly packed: string;
  readonly key: readonly string[];
  readonly pack: (text: string) => Uint8Array;
}

const TABLES: Record<CompactProgress['table'], Table> = {
  build_events: { what: 'event chunks', text: 'events', packed: 'events_packed', key: ['events_key', 'chunk'], pack: packEvents },
  build_attributes: { what: 'attribute documents', text: 'attributes', packed: 'attributes_packed', key: ['seq'], pack: packAttributes },
};

/** SQLite's build_events since store migration 0018: keyed by its rowid (events-rowid.ts). */
const SQLITE_EVENTS: Table = { ...TABLES.build_events, key: ['id'] };

type Row = Record<string, unknown>;

async function convert(db: Db, t: Table, table: CompactProgress['table'], logger: Logger | undefined, onProgress: ((p: CompactProgress) => void) | undefined): Promise<number> {
  const unconverted = () => db.selectFrom(table).where(t.packed, 'is', null);
  // Cheap first: is there anything at all? (The partial index holds only unconverted rows.)
  if ((await unconverted().select(t.key[0]!).limit(1).executeTakeFirst()) === undefined) return 0;
  const total = Number((await unconverted().select(sql<number | string>`count(*)`.as('n')).executeTakeFirstOrThrow()).n);
  logger?.info({ table, rows: total }, `converting ${total} stored ${t.what} to the compressed form`);
  let done = 0;
  let after: Row | undefined;
  const started = performance.now();
  let lastLog = started;
  for (;;) {
    // The keys first, then each row's text alone: a batch of large chunks (a build sent in one line
    // can be tens of MB) is never held at once, only the compressed results.
    let q = unconverted().select([...t.key] as never[]);
    if (after !== undefined) {
      const a = after;
      q = q.where((eb) =>
        t.key.length === 1
          ? eb(t.key[0]!, '>', a[t.key[0]!])
          : eb.or([eb(t.key[0]!, '>', a[t.key[0]!]), eb.and([eb(t.key[0]!, '=', a[t.key[0]!]), eb(t.key[1]!, '>', a[t.key[1]!])])]),
      );
    }
    for (const k of t.key) q = q.orderBy(k as never);
    const rows = (await q.limit(BATCH).execute()) as Row[];
    if (rows.length === 0) break;
    const packed: { key: Row; bytes: Uint8Array }[] = [];
    for (const r of rows) {
      let one = unconverted().select(t.text as never);
      for (const k of t.key) one = one.where(k, '=', r[k]);
      const row = (await one.executeTakeFirst()) as Row | undefined;
      if (row !== undefined) packed.push({ key: r, bytes: t.pack(row[t.text] as string) });
    }
    await db.transaction().execute(async (trx) => {
      for (const p of packed) {
        let u = trx.updateTable(table).set({ [t.text]: '', [t.packed]: p.bytes }).where(t.packed, 'is', null);
        for (const k of t.key) u = u.where(k, '=', p.key[k]);
        await u.execute();
      }
    });
    done += rows.length;
    after = rows[rows.length - 1]!;
    onProgress?.({ table, done, of: total });
    if (performance.now() - lastLog > LOG_EVERY_MS) {
      lastLog = performance.now();
      logger?.info({ table, done, of: total }, `${t.what} converted: ${done}/${total} (${Math.round((100 * done) / Math.max(total, 1))}%)`);
    }
  }
  logger?.info({ table, rows: done, ms: Math.round(performance.now() - started) }, `converted ${done} ${t.what} to the compressed form`);
  return done;
}
