// Tables of the cache node registry (component `cache_nodes`): node credentials and the last
// report of each registered node.

import type { Kysely, Migration } from 'kysely';

export const CACHE_NODES_COMPONENT = 'cache_nodes';

export const cacheNodeMigrations: Record<string, Migration> = {
  '001_cache_node': {
    // Kysely<any>, not the typed Database (db/schema.ts): a migration must keep doing what it did
    // when it was released, whatever the tables' types say today (kysely's own advice).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('cache_node')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('node_key', 'text', (c) => c.notNull().unique())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('address', 'text')
        .addColumn('registered_at', 'bigint')
        .addColumn('last_seen_at', 'bigint')
        .addColumn('status', 'text')
        .execute();
    },
  },
};
