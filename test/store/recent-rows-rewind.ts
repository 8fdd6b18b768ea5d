// Takes a store back to before store migration 0019, for the tests that rewind the migrations to an
// older schema: the recent child rows are moved into build_custom_values and build_values (as a
// move does) and 0019 is no longer recorded as run. The tables stay, empty (0019 creates them only
// where they are missing): the tests that then run one older migration by itself read the store
// through today's search compiler, which reads those tables too.

import { sql, type Kysely } from 'kysely';
import { undoTests } from './tests-rewind.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function undoRecentRows(db: Kysely<any>): Promise<void> {
  // A later migration first: kysely runs migrations in order only.
  await undoTests(db);
  const ran = (await sql`SELECT 1 FROM store_migration WHERE name = '0019_recent_rows'`.execute(db)).rows.length > 0;
  if (!ran) return;
  await sql`INSERT INTO build_custom_values (seq, name, value) SELECT seq, name, value FROM build_custom_values_recent ORDER BY seq`.execute(db);
  await sql`DELETE FROM build_custom_values_recent`.execute(db);
  await sql`INSERT INTO build_values (field, value, seq) SELECT field, value, seq FROM build_values_recent ORDER BY seq`.execute(db);
  await sql`DELETE FROM build_values_recent`.execute(db);
  await sql`DELETE FROM store_migration WHERE name = '0019_recent_rows'`.execute(db);
}
