// Deleting builds (retention and `buildscope prune`): one small batch per transaction, so that a
// deletion never holds the database's writer for long and ingest goes on between batches.
//
// A batch deletes every row of its builds in one transaction: `builds`, their events, values,
// custom values, attributes and any other per-build table, and records each build in
// `deleted_builds` (ID, project, seq). So a deleted build leaves every listing, search, count and
// export stream at the commit, on both databases. On SQLite the trigram tables follow by their
// delete triggers; value terms stay (a term without rows matches no build, sql/indexes.ts).

import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { DELETED_BUILDS } from './schema/migrations.js';
import { layoutOf } from './schema/layout.js';
import { rollupRemovals } from './analytics/rollups.js';
import type { DeletedBuild, PruneCandidate, PruneSelection } from './types.js';

/** Tables with one or more rows per available build, keyed by its seq. */
const BY_SEQ = ['build_values', 'build_custom_values', 'build_custom_values_recent', 'build_values_recent', 'build_attributes', 'build_tasks', 'build_task_counts', 'build_attestations', 'test_runs', 'test_packs', 'build_failures'] as const;

/** Builds per transaction: a batch holds the writer ~30 ms (median, bench/prune.ts at 20k builds on this shared machine). */
export const DEFAULT_PRUNE_BATCH = 100;

type Db = Kysely<Database>;

interface CandidateRow {
  id: string;
  seq: number | string | null;
  project_name: string | null;
}

/** The next `limit` builds of `selection` (oldest first), without deleting anything. */
export async function pruneCandidates(db: Db, selection: PruneSelection, limit: number, afterId?: string, paged = afterId !== undefined): Promise<PruneCandidate[]> {
  let q = db.selectFrom('builds').select(['id', 'seq', 'project_name']);
  switch (selection.kind) {
    case 'startedBefore':
      // The start time is indexed (buildstarttime, seq); a build without one (incomplete, or no
      // BuildStarted yet) counts from when it was received.
      q = q
        .where((eb) =>
          eb.or([eb('buildstarttime', '<', selection.instant), eb.and([eb('buildstarttime', 'is', null), eb('received_at', '<', selection.instant)])]),
        );
      // Paging (a dry run's listing) goes by ID; a deletion takes any matching builds, so that the
      // database stops at the first `limit` it finds instead of sorting every old build per batch.
      if (afterId !== undefined) q = q.where('id', '>', afterId);
      if (afterId !== undefined || paged) q = q.orderBy('id');
      break;
    case 'oldest':
      q = q.where('seq', 'is not', null).orderBy('seq');
      break;
  }
  const rows = (await q.limit(limit).execute()) as CandidateRow[];
  return rows.map((r) => ({ id: r.id, seq: r.seq === null ? null : Number(r.seq), project: r.project_name }));
}

/** How many builds `selection` names now (a dry run's count). */
export async function countPruneCandidates(db: Db, selection: PruneSelection): Promise<number> {
  if (selection.kind === 'oldest') throw new Error('countPruneCandidates: "oldest" has no end');
  const row = await db
    .selectFrom('builds')
    .select(sql<number | string>`count(*)`.as('n'))
    .where((eb) =>
      eb.or([eb('buildstarttime', '<', selection.instant), eb.and([eb('buildstarttime', 'is', null), eb('received_at', '<', selection.instant)])]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes builds in one transaction; returns those that were still there to delete. */
export async function deleteBuilds(handle: DatabaseHandle, candidates: readonly PruneCandidate[], now: number): Promise<PruneCandidate[]> {
  if (candidates.length === 0) return [];
  const ids = candidates.map((c) => c.id);
  const db = handle.db;
  // Read again inside the transaction: another process may have deleted some, or a build may
  // have become available since it was chosen (its seq is needed for its child rows).
  const select = db.selectFrom('builds').select(['id', 'seq', 'project_name']).where('id', 'in', ids);
  const writes = (rows: readonly CandidateRow[]): { gone: PruneCandidate[]; statements: CompiledQuery[] } => {
    const gone = rows.map((r) => ({ id: r.id, seq: r.seq === null ? null : Number(r.seq), project: r.project_name }));
    const seqs = gone.flatMap((g) => (g.seq === null ? [] : [g.seq]));
    const present = gone.map((g) => g.id);
    const statements: CompiledQuery[] = [];
    if (gone.length === 0) return { gone, statements };
    statements.push(
      db
        .insertInto(DELETED_BUILDS)
        .values(gone.map((g) => ({ id: g.id, seq: g.seq, project_name: g.project, deleted_at: now })))
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({ seq: eb.ref('excluded.seq'), project_name: eb.ref('excluded.project_name'), deleted_at: eb.ref('excluded.deleted_at') })),
        )
        .compile(),
    );
    // The trend rollups first: they are computed from the rows about to be deleted.
    statements.push(...rollupRemovals(db, handle.dialect, seqs));
    if (seqs.length > 0) for (const t of BY_SEQ) statements.push(db.deleteFrom(t).where('seq', 'in', seqs).compile());
    // By the builds' events keys (store migration 0014), read in the same statement.
    statements.push(sql`DELETE FROM build_events WHERE ${layoutOf(handle.dialect).chunks.ofBuilds(sql.join(present))}`.compile(db));
    statements.push(db.deleteFrom('builds').where('id', 'in', present).compile());
    return { gone, statements };
  };
  const sqlite = handle.sqlite;
  if (sqlite !== undefined) {
    // One synchronous better-sqlite3 transaction: nothing else runs on this thread meanwhile, and
    // IMMEDIATE takes the write lock up front, as the ingest does.
    const q = select.compile();
    return sqlite
      .transaction(() => {
        const { gone, statements } = writes(sqlite.prepare(q.sql).all(...(q.parameters as unknown[])) as CandidateRow[]);
        for (const st of statements) sqlite.prepare(st.sql).run(...(st.parameters as unknown[]));
        return gone;
      })
      .immediate();
  }
  return db.transaction().execute(async (trx) => {
    const { gone, statements } = writes((await trx.selectFrom('builds').select(['id', 'seq', 'project_name']).where('id', 'in', ids).forUpdate().execute()) as CandidateRow[]);
    for (const st of statements) await trx.executeQuery(st);
    return gone;
  });
}


export async function deletedBuild(db: Db, id: string): Promise<DeletedBuild | undefined> {
  const row = (await db.selectFrom(DELETED_BUILDS).select(['seq', 'project_name', 'deleted_at']).where('id', '=', id).executeTakeFirst()) as
    | { seq: number | string | null; project_name: string | null; deleted_at: number | string }
    | undefined;
  if (row === undefined) return undefined;
  return { seq: row.seq === null ? null : Number(row.seq), project: row.project_name, deletedAt: Number(row.deleted_at) };
}
