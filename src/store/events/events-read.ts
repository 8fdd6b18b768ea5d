// The stored events of many builds at once, by events key, for the steps that derive something
// again from every stored build: the catalog's backfill of a new field (reconcile.ts) and the test
// dimension's backfill (test-backfill.ts). Events are the source of truth.

import { sql, type Kysely } from 'kysely';
import { decodeEvents, storedEvents } from './event-codec.js';
import { eventsRange } from '../schema/events-rowid.js';
import type { BuildEvent } from '../types.js';

/** Each build's events, in order, by its events key; a key without chunks is absent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function eventsByKey(db: Kysely<any>, dialect: 'sqlite' | 'postgres', keys: readonly number[]): Promise<Map<number, BuildEvent[]>> {
  const chunks =
    // Builds of a layout without events keys have none to read (and `IN ()` is no SQL).
    keys.length === 0
      ? []
      : dialect === 'sqlite'
        ? // Each build's chunks a range of rowids (store migration 0018), in key order.
          (
            await sql<{ events_key: number; events: string; events_packed: Uint8Array | null }>`SELECT e.events_key, e.events, e.events_packed
              FROM json_each(${JSON.stringify(keys)}) AS k CROSS JOIN build_events AS e ON ${eventsRange(sql`k.value`, 'e.id')} ORDER BY e.id`.execute(db)
          ).rows
        : await db.selectFrom('build_events').select(['events_key', 'events', 'events_packed']).where('events_key', 'in', keys).orderBy('events_key').orderBy('chunk').execute();
  const events = new Map<number, BuildEvent[]>();
  for (const ch of chunks) {
    const key = Number(ch.events_key);
    const list = events.get(key) ?? [];
    for (const e of decodeEvents(storedEvents(ch.events as string, ch.events_packed as Uint8Array | null))) list.push(e);
    events.set(key, list);
  }
  return events;
}
