// Store migrations 0005 to 0014 on a database that already holds builds: the task rows and the
// per-build task counts are filled from the stored events, and the trend rollups from those,
// equal to what the ingest writes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { undoEventsKey } from '../store/events-key-rewind.js';
import { rollupRowsByKeyText } from '../store/rollup-keys-rewind.js';

const dir = mkdtempSync(join(tmpdir(), 'buildscope-task-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('fills build_tasks and build_task_counts for builds stored before them', async () => {
  const rows = async (h: Awaited<ReturnType<typeof openDatabase>>) => ({
    // The path from the dictionary and the outcome's code (0012).
    tasks: (await sql`SELECT t.seq, t.ord, p.path, t.outcome, t.start_ms, t.duration_ms, t.cacheable FROM build_tasks AS t JOIN task_paths AS p ON p.id = t.path_id ORDER BY t.seq, t.ord`.execute(h.db)).rows,
    counts: (await sql`SELECT * FROM build_task_counts ORDER BY seq`.execute(h.db)).rows,
    // Migration 0009 fills the trend rollups from these rows as the ingest keeps them.
    // Migration 0013 then converts them to key IDs: compared by the keys' text.
    rollups: await rollupRowsByKeyText(h),
  });
  let handle = await openDatabase({ data: dir });
  // Stored as text, as a store before migration 0008 did.
  let store = await openBuildStore(handle, { ingestWorker: false, packEvents: false });
  await store.ingestNdjson([...demoBuilds({ builds: 60, seed: 3, now: Date.UTC(2026, 0, 1) })].join('\n'));
  const written = await rows(handle);
  expect(written.tasks.length).toBeGreaterThan(60 * 5);
  expect(written.counts.length).toBe(60);
  expect(written.rollups.builds.length).toBeGreaterThan(60);
  const facetRows = written.rollups.facets as { field: string }[];
  expect(new Set(facetRows.map((r) => r.field))).toEqual(new Set(['buildTool', 'user', 'tag']));
  // Back to the state before 0005: no task tables, those migrations and the later ones not run
  // (kysely runs migrations in order only).
  // 0015 (values keyed by their search key) and 0014 (events keyed in arrival order):
  // build_values a rowid table and build_events keyed by build ID again.
  await undoEventsKey(handle.db, 'sqlite');
  await sql`DROP TABLE build_tasks`.execute(handle.db);
  await sql`DROP TABLE build_task_counts`.execute(handle.db);
  await sql`DROP INDEX builds_trend`.execute(handle.db);
  await sql`DROP TABLE deleted_builds`.execute(handle.db);
  await sql`DROP INDEX build_values_seq`.execute(handle.db);
  await sql`DROP INDEX build_custom_values_seq`.execute(handle.db);
  for (const t of ['build_rollups', 'build_duration_rollups', 'build_task_rollups']) await sql`DROP TABLE ${sql.raw(t)}`.execute(handle.db);
  await sql`DROP INDEX builds_duration_day`.execute(handle.db);
  await sql`DROP TABLE build_attestations`.execute(handle.db);
  await sql`DROP TABLE build_facet_rollups`.execute(handle.db);
  // 0012 (compact task rows) and 0013 (rollup keys).
  await sql`DROP TABLE task_paths`.execute(handle.db);
  await sql`DROP TABLE rollup_keys`.execute(handle.db);
  // 0008 (compressed events): the builds were stored as text, as before it.
  await sql`DROP INDEX build_events_text`.execute(handle.db);
  await sql`DROP INDEX build_attributes_text`.execute(handle.db);
  await sql`ALTER TABLE build_events DROP COLUMN events_packed`.execute(handle.db);
  await sql`ALTER TABLE build_attributes DROP COLUMN attributes_packed`.execute(handle.db);
  await sql`DELETE FROM store_migration WHERE name >= '0005'`.execute(handle.db);
  await store.close();
  await handle.close();

  handle = await openDatabase({ data: dir });
  store = await openBuildStore(handle, { ingestWorker: false });
  expect(await rows(handle)).toEqual(written);
  await store.close();
  await handle.close();
});
