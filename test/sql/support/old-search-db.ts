// A database whose store is migrated and whose search indexes stand as a release left them, up to
// and including search migration `upTo`: for the tests of a later search migration.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { NO_PROGRESS_LOG, searchMigrations } from '../../../src/sql/indexes.js';
import { migrateStore, recentRowsTables } from '../../../src/store/schema/migrations.js';
import { addCatalogColumns } from '../../../src/store/schema/reconcile.js';
import { dialectOf } from '../../../src/sql/index.js';
import { createTestDatabase } from '../../support/postgres.js';

export async function searchDatabaseUpTo(dialect: 'sqlite' | 'postgres', upTo: string): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  let handle: DatabaseHandle;
  let drop: () => Promise<void>;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bs-old-search-'));
    handle = await openDatabase({ data: dir });
    drop = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const pg = await createTestDatabase();
    if (pg === undefined) throw new Error('PostgreSQL unavailable');
    handle = await openDatabase({ url: pg.url });
    drop = () => pg.drop();
  }
  await migrateStore(handle);
  await migrate(handle, 'search', searchMigrations(handle.dialect, NO_PROGRESS_LOG), upTo);
  // The store waits at 0014 for these search migrations (migrations.ts migrateStore), but today's
  // search compiler, which the tests run on this layout, reads the recent child rows of 0019
  // too: their tables, made as 0019 makes them (0019 itself later leaves them as they are).
  await recentRowsTables(handle.db);
  // And the columns of the catalog's fields added since the frozen migrations, as the store adds
  // them when it opens (reconcile.ts), which today's compiler and test support also read; not
  // their indexes, which the later search migrations under test make.
  await addCatalogColumns(dialectOf(handle.dialect), handle.db);
  return { handle, drop };
}
