// "Load a stored build" for the ingest's plan (ingest/plan.ts), once for both dialects: which
// columns to read, whose events to read, and how the rows become a StoredBuild. Each dialect's
// write path (ingest/sqlite.ts, ingest/postgres.ts) only runs the two queries.

import type { ToolType } from '../../query/catalog.js';
import type { StoredBuild } from './plan.js';
import type { Visibility } from '../types.js';
import { projectVisible } from '../search/visibility.js';
import { storedEvents } from '../events/event-codec.js';
import { hashText } from '../schema/hash-bytes.js';
import { contentHash } from '../events/canonical.js';

/** The builds columns the plan needs of a stored build. */
export const STORED_BUILD_COLUMNS = ['id', 'seq', 'tool_type', 'tool_version', 'agent_version', 'content_hash', 'received_at', 'project_name', 'events_key'] as const;

export type StoredBuildRow = { readonly [K in (typeof STORED_BUILD_COLUMNS)[number]]: unknown };

/** A stored events chunk, as the plan compares it (read in key, then chunk order). */
export interface StoredChunkRow {
  /** The build's events_key (store migration 0014). */
  readonly events_key: number | string;
  /**
   * The content hash's 32 bytes (store migration 0017); absent on SQLite since store migration
   * 0018, where it is computed again from the chunk's events (events-rowid.ts).
   */
  readonly hash?: Uint8Array | string;
  /** The events as text, or '' when `events_packed` holds them (store migration 0008). */
  readonly events: string;
  readonly events_packed: Uint8Array | null;
}

/** Whether a publisher of this visibility may append to a build of this project (absent: anyone). */
export function mayAppend(visibility: Visibility | undefined, project: string | null): boolean {
  return visibility === undefined || projectVisible(visibility, project);
}

/**
 * The events keys of the builds whose events must be read: only those the publisher may append
 * to. A build out of her sight is refused on its header alone (ingest/plan.ts), so its events are
 * not even read and the time of the answer does not grow with them.
 */
export function keysToRead(rows: readonly StoredBuildRow[], visibility: Visibility | undefined): number[] {
  return rows.filter((r) => r.events_key !== null && mayAppend(visibility, r.project_name as string | null)).map((r) => Number(r.events_key));
}

/** The stored builds of `rows` with their `chunks` (ordered by key, then chunk), by ID. */
export function storedBuilds(rows: readonly StoredBuildRow[], chunks: readonly StoredChunkRow[]): Map<string, StoredBuild> {
  const byKey = new Map<number, StoredChunkRow[]>();
  for (const c of chunks) {
    const key = Number(c.events_key);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [c]);
    else list.push(c);
  }
  const out = new Map<string, StoredBuild>();
  for (const r of rows) {
    const id = r.id as string;
    const cs = r.events_key === null ? [] : (byKey.get(Number(r.events_key)) ?? []);
    const header = { toolType: r.tool_type as ToolType, toolVersion: r.tool_version as string, agentVersion: r.agent_version as string };
    const chunkEvents = cs.map((c) => storedEvents(c.events, c.events_packed));
    out.set(id, {
      id,
      ...header,
      seq: r.seq === null ? null : Number(r.seq),
      eventsKey: Number(r.events_key),
      contentHash: hashText(r.content_hash),
      receivedAt: Number(r.received_at),
      project: r.project_name as string | null,
      // A chunk's hash is the content hash of its line: the build's header and the chunk's
      // encoded events, as stored (prepare.ts); SQLite no longer stores it (store migration 0018).
      chunkHashes: cs.map((c, i) => (c.hash === undefined ? contentHash(header, chunkEvents[i]!) : hashText(c.hash))),
      chunkEvents,
    });
  }
  return out;
}

/** The distinct build IDs the lines name. */
export function namedBuildIds(lines: readonly { readonly prepared: { readonly ok: boolean; readonly buildId?: string | undefined } }[]): string[] {
  const ids = new Set<string>();
  for (const l of lines) if (l.prepared.buildId !== undefined) ids.add(l.prepared.buildId);
  return [...ids];
}
