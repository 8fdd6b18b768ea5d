// Reading a build's stored events back, chunk by chunk (the layout of build_events:
// event-codec.ts for a chunk's contents, schema/layout.ts for how chunks are addressed). Used by
// the store's event streams (the export, the build pages, the API's events).

import { sql, type CompiledQuery, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StoreLayout } from '../schema/layout.js';
import { decodeEvents, inflateSlices, storedEvents, unpackEvents } from './event-codec.js';
import type { BuildEvent } from '../types.js';
import { ArrayElementSplitter } from './event-splitter.js';

/**
 * Reading a build's events: chunks up to INLINE_CHUNK_CHARS characters are listed CHUNK_BATCH at a
 * time with their text, larger ones are read SLICE_CHARS at a time. A reader so holds at most about
 * 1 M characters of stored text. Each slice query reads the whole value in the database (SQLite
 * and TOAST have no partial text reads), so a slice is large enough that a 15 MB chunk costs 15
 * queries, not hundreds.
 */
const INLINE_CHUNK_CHARS = 64 * 1024;
const CHUNK_BATCH = 16;
const SLICE_CHARS = 1024 * 1024;
/**
 * Compressed chunks (store migration 0008) up to this many bytes are listed with their bytes; one
 * whose text is at most INLINE_CHUNK_CHARS is inflated at once, any other as a stream, so that a
 * reader never holds a large chunk's text (a chunk of repetitive events compresses 100-fold).
 */
const INLINE_PACKED_BYTES = 16 * 1024;
/** Placeholder values of the compiled chunk listing (#listChunks): no build ID has a control character. */
const CHUNKS_ID = '\u0001build';
const CHUNKS_AFTER = -0x5eed;

interface ChunkRow {
  /** The build's events_key (store migration 0014), by which its slices are read. */
  key: number | string;
  chunk: number | string;
  length: number | string;
  packedLength: number | string | null;
  events: string | null;
  packed: Uint8Array | null;
}

/**
 * Whether a build with this ID can exist. PostgreSQL's text cannot hold NUL (a parameter with one
 * is a database error, which was a 500 for `GET /api/builds/a%00b`), and ingest stores no such ID
 * on either database: a lookup of one finds nothing, without asking the database.
 */
export function mayBeStored(id: string): boolean {
  return !id.includes('\0');
}

/** The stored events of builds, read with bounded memory whatever a build's size. */
export class StoredEvents {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly layout: StoreLayout,
  ) {}

  /** Every event of a build, each chunk decoded whole (see BuildStore.readEvents). */
  async readAll(id: string): Promise<BuildEvent[]> {
    if (!mayBeStored(id)) return [];
    const key = sql`SELECT builds.events_key FROM builds WHERE builds.id = ${id}`;
    const chunks = await sql<{ events: string; events_packed: Uint8Array | null }>`SELECT e.events, e.events_packed FROM build_events AS e
      WHERE ${this.layout.chunks.of(key, 'e')} ORDER BY ${sql.ref(`e.${this.layout.chunks.order}`)}`.execute(this.db);
    const events: BuildEvent[] = [];
    for (const c of chunks.rows) for (const e of decodeEvents(storedEvents(c.events, c.events_packed))) events.push(e);
    return events;
  }

  /** The stored tuples of a build read by `read`, those of the listed event types only when given. */
  async *read<T>(id: string, eventTypes: readonly string[] | undefined, read: (tuple: string) => T, typeOf: (event: T) => string): AsyncIterable<T> {
    const types = eventTypes === undefined ? undefined : new Set(eventTypes);
    for await (const tuple of this.#storedTuples(id)) {
      const e = read(tuple);
      if (types === undefined || types.has(typeOf(e))) yield e;
    }
  }

  /**
   * The chunk listing of streamEvents, compiled once: building and compiling it in kysely for
   * every build was about a tenth of an export's CPU. The parameters are put in by their
   * placeholders' values (CHUNKS_ID, CHUNKS_AFTER), not by position.
   */
  #chunkListing: CompiledQuery | undefined;

  async #listChunks(id: string, after: number): Promise<ChunkRow[]> {
    if (this.#chunkListing === undefined) {
      this.#chunkListing = this.db
        .selectFrom('build_events')
        .select([
          'events_key as key',
          'chunk',
          sql<number>`length(events)`.as('length'),
          sql<number | null>`length(events_packed)`.as('packedLength'),
          // Small chunks come with the listing; larger ones are read in slices below.
          sql<string | null>`case when length(events) <= ${sql.lit(INLINE_CHUNK_CHARS)} then events else null end`.as('events'),
          sql<Uint8Array | null>`case when length(events_packed) <= ${sql.lit(INLINE_PACKED_BYTES)} then events_packed else null end`.as('packed'),
        ])
        // The build's key looked up in the same statement: one query per batch, as before 0014.
        // SQLite: the build's chunks are a range of rowids (store migration 0018, events-rowid.ts).
        .where(({ selectFrom }) => {
          const key = selectFrom('builds').select('builds.events_key').where('builds.id', '=', CHUNKS_ID);
          return this.layout.chunks.of(sql`${key}`, 'build_events', sql`${CHUNKS_AFTER}`).$castTo<SqlBool>();
        })
        .orderBy(sql.ref(this.layout.chunks.order))
        .limit(sql.lit(CHUNK_BATCH))
        .compile();
    }
    const c = this.#chunkListing;
    const parameters = c.parameters.map((p) => (p === CHUNKS_ID ? id : p === CHUNKS_AFTER ? after : p));
    return (await this.db.executeQuery<ChunkRow>({ ...c, parameters })).rows;
  }

  /** The stored tuples of a build's events (event-codec.ts), one element text at a time. */
  async *#storedTuples(id: string): AsyncIterable<string> {
    if (!mayBeStored(id)) return;
    let after = -1;
    for (;;) {
      const rows = await this.#listChunks(id, after);
      for (const r of rows) {
        const chunk = Number(r.chunk);
        const splitter = new ArrayElementSplitter();
        for await (const slice of this.#chunkText(id, Number(r.key), chunk, r)) yield* splitter.push(slice);
        splitter.end();
        after = chunk;
      }
      if (rows.length < CHUNK_BATCH) return;
    }
  }

  /**
   * The text of one stored chunk in pieces (see INLINE_CHUNK_CHARS): a small text chunk as listed;
   * a small compressed one inflated at once unless its text is longer than INLINE_CHUNK_CHARS; any
   * other inflated as a stream of its bytes, which are read SLICE_CHARS at a time when the chunk is
   * large. Takes the listed value out of the row, so that the row no longer holds it.
   */
  async *#chunkText(id: string, key: number, chunk: number, r: { length: number | string; packedLength: number | string | null; events: string | null; packed: Uint8Array | null }): AsyncIterable<string> {
    if (r.packedLength === null) {
      const text = r.events;
      r.events = null;
      if (text !== null) yield text;
      else yield* this.#slices(id, key, chunk, Number(r.length), 'events');
      return;
    }
    const packed = r.packed;
    r.packed = null;
    if (packed !== null) {
      const text = unpackEvents(packed, INLINE_CHUNK_CHARS);
      if (text !== undefined) yield text;
      else yield* inflateSlices((async function* () { yield packed; })());
      return;
    }
    yield* inflateSlices(this.#slices(id, key, chunk, Number(r.packedLength), 'events_packed'));
  }

  /** A stored chunk's text (or compressed bytes) in slices of SLICE_CHARS characters (bytes). */
  #slices(id: string, key: number, chunk: number, length: number, column: 'events'): AsyncIterable<string>;
  #slices(id: string, key: number, chunk: number, length: number, column: 'events_packed'): AsyncIterable<Uint8Array>;
  async *#slices(id: string, key: number, chunk: number, length: number, column: 'events' | 'events_packed'): AsyncIterable<string | Uint8Array> {
    for (let from = 1; from <= length; from += SLICE_CHARS) {
      const row = await this.db
        .selectFrom('build_events')
        .select(sql<string | Uint8Array>`substr(${sql.ref(column)}, ${sql.lit(from)}, ${sql.lit(SLICE_CHARS)})`.as('slice'))
        .where(this.layout.chunks.at(key, chunk).$castTo<SqlBool>())
        .executeTakeFirst();
      if (row === undefined) throw new Error(`Chunk ${chunk} of build ${id} vanished while it was read`);
      yield row.slice;
    }
  }
}
