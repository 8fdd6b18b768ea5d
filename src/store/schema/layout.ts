// How the store lays its tables out on each database, chosen once per store by `layoutOf`, as
// `dialectOf` (src/sql/dialect.ts) chooses the compiler's hooks. Everything the store does
// differently on SQLite and PostgreSQL, apart from the SQL the compiler writes, is a field of
// this object: column types, how a table is clustered, how a build's event chunks are addressed,
// the SQL of steps whose statements differ. A module of the store takes a layout and never compares dialect names; a new
// database is one more object and one more case in `layoutOf`.

import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { assertNever } from '../../query/assert.js';
import type { DialectName } from '../../db/database.js';
import { eventsId, eventsRange } from './events-rowid.js';

/** The store's physical layout on one database. */
export interface StoreLayout {
  readonly name: DialectName;
  /** A 64-bit integer column. */
  readonly int64: 'integer' | 'bigint';
  /** A 64-bit float column. */
  readonly float64: 'real' | 'double precision';
  /** A column of bytes. */
  readonly bytes: 'blob' | 'bytea';
  /** An integer primary key `id` that the database numbers (DDL text). */
  readonly numberedId: string;
  /**
   * Appended to a CREATE TABLE whose rows should be stored in primary-key order: SQLite's
   * WITHOUT ROWID; nothing on PostgreSQL, whose tables are heaps either way.
   */
  readonly clustered: string;
  /** A row's physical position in table `t` (batching a conversion in storage order). */
  readonly rowPosition: string;
  /** The SQL function of the larger of two values. */
  readonly greatest: 'max' | 'greatest';
  /** The primary key index of a table is named after it and must be renamed with it (PostgreSQL). */
  readonly namesPrimaryKeyIndex: boolean;
  /** How the chunks of a build's events are addressed in build_events. */
  readonly chunks: ChunkAddressing;
  /** How the analytics index reads the columns of many builds at once. */
  readonly columnScan: ColumnScan;
  /**
   * How the analytics index reads a term's builds: `text`, one value per term, its seqs joined by
   * commas (`group_concat`, SQLite: a row costs its driver 1-1.5 µs to hand over, the statement
   * itself a tenth of that; `requested:*test*`'s 215k builds at 1M took 183-258 ms as rows, 34 ms
   * and 8 ms of parsing as text); `words`, one row per 32 builds with the bits of those that match
   * (`bit_or`), where rows are parsed in the server's thread (PostgreSQL: `requested:*test*` is
   * 215k rows at 1M builds as seqs, a seventh of that as words).
   */
  readonly termRead: 'text' | 'words';
  /** How a statement tests a seq against a set of seqs given as a bitmap (store/search/seq-set.ts). */
  readonly seqSet: SeqSetTest;
  /**
   * How one statement walks an index for each of many keys, the latest entries of each (the Tests
   * page's verdicts, store/analytics/test-analytics.ts): `union`, one ordered and limited part per
   * key (SQLite has no LATERAL); `lateral`, the keys as an array joined LATERAL to one such part
   * (PostgreSQL took 13-18 ms to plan a union of 100 parts, 1 ms the lateral join, with the
   * same execution).
   */
  readonly walks: 'union' | 'lateral';
  /**
   * The pack stream (events/test-packs.ts) of the test_packs rows `p` a statement selects, without
   * the executions unless `runs`: SQLite, one value for all of them (an aggregate: a row each
   * cost the search thread ten times SQLite's scan); PostgreSQL, a value each, which the search
   * guard reads through binary COPY (search/pg-copy.ts), so the rows cross as one stream of their
   * bytes. Either way the values back to back are one pack stream.
   */
  readonly packStream: (runs: boolean) => RawBuilder<Uint8Array | null>;
}

/**
 * A set of seqs, bit s of word s >>> 5 of a Uint32Array, tested in SQL:
 * - SQLite: the function SEQ_SET_FUNCTION of the search connections (search/seq-set.ts), given the
 *   array itself as a parameter (the connection's thread binds its registry's number in its place);
 * - PostgreSQL: `get_bit` on the bitmap's bytes as a bytea, which numbers the bits of a byte from
 *   its least significant, as a Uint32Array lies in memory on a little-endian machine.
 */
export interface SeqSetTest {
  /** The set as one parameter of a statement. */
  value(words: Uint32Array): RawBuilder<unknown>;
  /** The condition that `seq` is in the set `words`, given as `value` (its parameter). */
  contains(seq: RawBuilder<unknown>, words: Uint32Array, value: RawBuilder<unknown>): RawBuilder<SqlBool>;
}

/** The SQLite function testing a seq against a set: `buildscope_in_set(set, seq)`, 1 when in it, else 0. */
export const SEQ_SET_FUNCTION = 'buildscope_in_set';

const SQLITE_SEQ_SET: SeqSetTest = {
  value: (words) => sql`${words}`,
  contains: (seq, _words, value) => sql<SqlBool>`${sql.raw(SEQ_SET_FUNCTION)}(${value}, ${seq}) = 1`,
};

const POSTGRES_SEQ_SET: SeqSetTest = {
  value: (words) => {
    const bytes = Buffer.alloc(words.length * 4);
    for (let w = 0; w < words.length; w++) bytes.writeUInt32LE(words[w]!, w * 4);
    return sql`CAST(${bytes} AS bytea)`;
  },
  // CASE: get_bit fails past the end, and an AND may be evaluated in any order.
  contains: (seq, words, value) => sql<SqlBool>`(CASE WHEN ${seq} < ${sql.lit(words.length * 32)} THEN get_bit(${value}, CAST(${seq} AS integer)) ELSE 0 END) = 1`,
};

/**
 * The analytics index's read of many builds (store/analytics/analytics-index.ts):
 * - `narrow-indexes`: each column group from a whole narrow index, scanned once (SQLite: its rows
 *   cross from a search thread packed, so one statement per group costs no memory to speak of,
 *   and the index entries are a fraction of the wide rows);
 * - `seq-ranges`: every column in one statement per range of `builds` seqs (PostgreSQL: the client
 *   holds a statement's rows as objects until it ends, ~150 bytes each, so a million at once would
 *   take the memory the store is allowed; and its heap is read whole either way).
 */
export type ColumnScan = { readonly kind: 'narrow-indexes' } | { readonly kind: 'seq-ranges'; readonly builds: number };

/**
 * Event chunks: on SQLite a build's chunks are a range of rowids (store migration 0018,
 * events-rowid.ts); on PostgreSQL rows keyed by (events_key, chunk).
 */
export interface ChunkAddressing {
  /** The chunks of the build(s) whose events key is `key` (an SQL expression), in table alias `t`, after chunk `after` when given. */
  of(key: RawBuilder<unknown>, t: string, after?: RawBuilder<unknown>): RawBuilder<boolean>;
  /** One chunk of the build with events key `key`. */
  at(key: number, chunk: number): RawBuilder<boolean>;
  /** The column that orders a build's chunks. */
  readonly order: 'id' | 'chunk';
  /** For DELETE FROM build_events: the chunks of the builds whose IDs are `ids` (an SQL list). */
  ofBuilds(ids: RawBuilder<unknown>): RawBuilder<boolean>;
  /** The chunks (events_key, events, events_packed) of the builds with these events keys, each build's in order. */
  ofKeys(keys: readonly number[]): RawBuilder<EventChunk>;
}

/** A stored chunk as ofKeys reads it. */
export interface EventChunk {
  events_key: number | string;
  events: string;
  events_packed: Uint8Array | null;
}

const SQLITE_CHUNKS: ChunkAddressing = {
  of: (key, t, after) => eventsRange(key, `${t}.id`, after),
  at: (key, chunk) => sql<boolean>`id = ${eventsId(key, chunk)}`,
  order: 'id',
  ofBuilds: (ids) => sql<boolean>`id IN (SELECT e.id FROM builds CROSS JOIN build_events AS e ON ${eventsRange(sql`builds.events_key`, 'e.id')} WHERE builds.id IN (${ids}))`,
  // The keys as one JSON parameter, each a range of rowids, in key order.
  ofKeys: (keys) =>
    sql<EventChunk>`SELECT e.events_key, e.events, e.events_packed FROM json_each(${JSON.stringify(keys)}) AS k CROSS JOIN build_events AS e ON ${eventsRange(sql`k.value`, 'e.id')} ORDER BY e.id`,
};

const POSTGRES_CHUNKS: ChunkAddressing = {
  of: (key, t, after) => (after === undefined ? sql<boolean>`${sql.ref(`${t}.events_key`)} = (${key})` : sql<boolean>`${sql.ref(`${t}.events_key`)} = (${key}) AND ${sql.ref(`${t}.chunk`)} > (${after})`),
  at: (key, chunk) => sql<boolean>`events_key = ${key} AND chunk = ${chunk}`,
  order: 'chunk',
  ofBuilds: (ids) => sql<boolean>`events_key IN (SELECT builds.events_key FROM builds WHERE builds.id IN (${ids}))`,
  ofKeys: (keys) =>
    sql<EventChunk>`SELECT events_key, events, events_packed FROM build_events WHERE events_key IN (${sql.join(keys)}) ORDER BY events_key, chunk`,
};

export const SQLITE_LAYOUT: StoreLayout = {
  name: 'sqlite',
  int64: 'integer',
  float64: 'real',
  bytes: 'blob',
  numberedId: 'id INTEGER PRIMARY KEY',
  clustered: ' WITHOUT ROWID',
  rowPosition: 't.rowid',
  greatest: 'max',
  namesPrimaryKeyIndex: false,
  chunks: SQLITE_CHUNKS,
  columnScan: { kind: 'narrow-indexes' },
  termRead: 'text',
  seqSet: SQLITE_SEQ_SET,
  walks: 'union',
  // A blob concatenated as text keeps its bytes (UTF-8 databases convert nothing); the header's
  // integers as hex digits made bytes (a start is whole ms: CAST drops nothing).
  packStream: (runs) =>
    sql`CAST(group_concat(unhex(printf('%016x%016x%08x%08x', p.seq, CAST(coalesce(p.start, -1) AS INTEGER), ${runs ? sql`length(p.runs)` : sql`0`}, coalesce(length(p.failures), 0))) || ${runs ? sql`p.runs` : sql`x''`} || coalesce(p.failures, x''), x'') AS BLOB)`,
};

export const POSTGRES_LAYOUT: StoreLayout = {
  name: 'postgres',
  int64: 'bigint',
  float64: 'double precision',
  bytes: 'bytea',
  numberedId: 'id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY',
  clustered: '',
  rowPosition: 't.ctid',
  greatest: 'greatest',
  namesPrimaryKeyIndex: true,
  chunks: POSTGRES_CHUNKS,
  // 50,000 builds: ~8 MB of row objects a statement.
  columnScan: { kind: 'seq-ranges', builds: 50_000 },
  termRead: 'words',
  seqSet: POSTGRES_SEQ_SET,
  walks: 'lateral',
  // A value a build, read through binary COPY (search/pg-copy.ts). Selected as rows, PostgreSQL
  // sends a bytea as hex text: 50,000 builds' packs aggregated took 454-482 ms, as base64 294-367,
  // a row a build 348-383.
  packStream: (runs) =>
    sql`int8send(p.seq) || int8send(CAST(coalesce(p.start, -1) AS bigint)) || int4send(${runs ? sql`length(p.runs)` : sql`0`}) || int4send(coalesce(length(p.failures), 0)) || ${runs ? sql`p.runs` : sql`''::bytea`} || coalesce(p.failures, ''::bytea)`,
};

/** The one place the store chooses its layout. */
export function layoutOf(name: DialectName): StoreLayout {
  switch (name) {
    case 'sqlite':
      return SQLITE_LAYOUT;
    case 'postgres':
      return POSTGRES_LAYOUT;
    default:
      return assertNever(name, 'dialect');
  }
}
