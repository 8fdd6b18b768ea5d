// The stored events of many builds at once, by events key, for the steps that derive something
// again from every stored build: the catalog's backfill of a new field (reconcile.ts) and the test
// dimension's backfill (test-backfill.ts). Events are the source of truth.

import type { Kysely } from 'kysely';
import { decodeEvents, storedEvents } from './event-codec.js';
import type { StoreLayout } from '../schema/layout.js';
import type { BuildEvent } from '../types.js';

/** Each build's events, in order, by its events key; a key without chunks is absent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function eventsByKey(db: Kysely<any>, layout: StoreLayout, keys: readonly number[]): Promise<Map<number, BuildEvent[]>> {
  // Builds of a layout without events keys have none to read (and `IN ()` is no SQL).
  const chunks = keys.length === 0 ? [] : (await layout.chunks.ofKeys(keys).execute(db)).rows;
  const events = new Map<number, BuildEvent[]>();
  for (const ch of chunks) {
    const key = Number(ch.events_key);
    const list = events.get(key) ?? [];
    for (const e of decodeEvents(storedEvents(ch.events as string, ch.events_packed as Uint8Array | null))) list.push(e);
    events.set(key, list);
  }
  return events;
}
