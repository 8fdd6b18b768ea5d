// Opens the database and build store named by the CLI's `--data DIR` / `--db URL` options.

import { openBuildStore } from './build-store.js';
import { DEFAULT_DATA_DIR, openDatabase, type DatabaseHandle } from '../db/database.js';
import type { BuildStore } from './types.js';

export interface StoreLocationOptions {
  readonly data?: string;
  readonly db?: string;
}

export async function openStoreAt(options: StoreLocationOptions): Promise<{ handle: DatabaseHandle; store: BuildStore; close(): Promise<void> }> {
  const handle = await openDatabase(options.db !== undefined ? { url: options.db } : { data: options.data ?? DEFAULT_DATA_DIR });
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
