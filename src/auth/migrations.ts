// Tables of the `auth` component: users, access keys (stored only as hashes) and the token
// signing secret. Migrated with migrate(handle, 'auth', AUTH_MIGRATIONS).

import type { Kysely, Migration } from 'kysely';

export const AUTH_MIGRATIONS: Record<string, Migration> = {
  '0001_users_keys': {
    // Kysely<any>, not the typed Database (db/schema.ts): a migration must keep doing what it did
    // when it was released, whatever the tables' types say today (kysely's own advice).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('auth_user')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('password_hash', 'text')
        // JSON arrays of permission config values and of project names (null: no project-level control).
        .addColumn('permissions', 'text', (c) => c.notNull())
        .addColumn('projects', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('auth_access_key')
        .ifNotExists()
        .addColumn('key_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_name', 'text', (c) => c.notNull().references('auth_user.name').onDelete('cascade'))
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('auth_access_key_user').ifNotExists().on('auth_access_key').column('user_name').execute();
      await db.schema
        .createTable('auth_signing_key')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};
