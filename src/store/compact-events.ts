// Converts the event chunks stored before store migration 0008 to the compressed form
// (event-codec.ts packEvents), in batches of 500 chunks, each its own transaction, with progress
// in the log. Runs when the store opens, after the migrations; a database with nothing left to
// convert costs one look-up in the partial index of the unconverted rows (build_events_text).
// Rows are visited in that index's order from where the last batch ended, so each batch is a
// range read whatever the size of the table.

import type { Logger } from 'pino';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import { packEvents } from './event-codec.js';

const BATCH = 500;

export interface CompactProgress {
  readonly done: number;
  readonly of: number;
}

/** Packs every chunk still stored as JSON text; returns how many were converted. */
export async function compactStoredEvents(handle: DatabaseHandle, logger?: Logger, onProgress?: (p: CompactProgress) => void): Promise<number> {
  const db = handle.db;
  // Cheap first: is there anything at all? (LIMIT 1 stops at the first unconverted row.)
  const any = await db.selectFrom('build_events').select('build_id').where('events_packed', 'is', null).limit(1).executeTakeFirst();
  if (any === undefined) return 0;
  const total = Number(
    (await db.selectFrom('build_events').select(sql<number | string>`count(*)`.as('n')).where('events_packed', 'is', null).executeTakeFirstOrThrow()).n,
  );
  logger?.info({ chunks: total }, `converting ${total} stored event chunks to the compressed form`);
  let done = 0;
  let after: { id: string; chunk: number } | undefined;
  let lastLog = performance.now();
  const started = lastLog;
  for (;;) {
    let q = db.selectFrom('build_events').select(['build_id', 'chunk', 'events']).where('events_packed', 'is', null);
    if (after !== undefined) {
      const a = after;
      q = q.where((eb) => eb.or([eb('build_id', '>', a.id), eb.and([eb('build_id', '=', a.id), eb('chunk', '>', a.chunk)])]));
    }
    const rows = (await q.orderBy('build_id').orderBy('chunk').limit(BATCH).execute()) as { build_id: string; chunk: number | string; events: string }[];
    if (rows.length === 0) break;
    const packed = rows.map((r) => ({ id: r.build_id, chunk: Number(r.chunk), bytes: packEvents(r.events) }));
    await db.transaction().execute(async (trx) => {
      for (const p of packed) {
        // Only if still unconverted: another process may have done this row meanwhile.
        await trx
          .updateTable('build_events')
          .set({ events: '', events_packed: p.bytes })
          .where('build_id', '=', p.id)
          .where('chunk', '=', p.chunk)
          .where('events_packed', 'is', null)
          .execute();
      }
    });
    done += rows.length;
    const last = rows[rows.length - 1]!;
    after = { id: last.build_id, chunk: Number(last.chunk) };
    onProgress?.({ done, of: total });
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      logger?.info({ done, of: total }, `event chunks converted: ${done}/${total} (${Math.round((100 * done) / Math.max(total, 1))}%)`);
    }
  }
  logger?.info({ chunks: done, ms: Math.round(performance.now() - started) }, `converted ${done} event chunks to the compressed form`);
  return done;
}
