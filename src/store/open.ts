// Opens the database and build store named by the CLI's `--data DIR` / `--db URL` options.

import { openBuildStore } from './build-store.js';
import { DatabaseLocationError, DEFAULT_DATA_DIR, openDatabase, type DatabaseHandle } from '../db/database.js';
import type { BuildStore } from './types.js';

export interface StoreLocationOptions {
  readonly data?: string;
  readonly db?: string;
}

export interface OpenStoreOptions {
  /** A read-only command: refuse a database that does not exist instead of creating it. */
  readonly mustExist?: boolean;
}

export async function openStoreAt(
  options: StoreLocationOptions,
  how: OpenStoreOptions = {},
): Promise<{ handle: DatabaseHandle; store: BuildStore; close(): Promise<void> }> {
  const mustExist = how.mustExist === true;
  if (options.data !== undefined && options.db !== undefined) throw new DatabaseLocationError('give either --data or --db, not both');
  const handle = await openDatabase(options.db !== undefined ? { url: options.db, mustExist } : { data: options.data ?? DEFAULT_DATA_DIR, mustExist });
  try {
    const store = await openBuildStore(handle);
    return {
      handle,
      store,
      async close() {
        await store.close();
        await handle.close();
      },
    };
  } catch (e) {
    await handle.close();
    throw e;
  }
}
