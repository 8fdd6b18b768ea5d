// Opens the database behind the server: SQLite in a data directory (the embedded default) or
// PostgreSQL selected by a postgres:// URL. Every component (builds, users and keys, provenance,
// cache node registry) keeps its tables in this one database, each with its own migration set.

import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

// PostgreSQL returns int8/numeric as strings by default; our counts, sequence numbers and epoch
// milliseconds all fit in a double, so read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export interface DatabaseLocation {
  /** Data directory for the embedded SQLite database (created when missing). */
  readonly data?: string;
  /** postgres:// or postgresql:// URL; takes precedence over `data`. */
  readonly url?: string;
  /**
   * Open only a database that exists (read-only commands): a missing data directory or database
   * file is a DatabaseLocationError, and nothing is created.
   */
  readonly mustExist?: boolean;
}

/** The database named cannot be used: not there, not a supported URL, or not reachable. Says which, in one line. */
export class DatabaseLocationError extends Error {
  override readonly name = 'DatabaseLocationError';
}

export interface DatabaseHandle {
  /** Typed by the tables every component's migrations create (schema.ts). */
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  /** The raw SQLite connection (SQLite only): for pragmas, FTS5 and synchronous transactions. */
  readonly sqlite?: BetterSqlite3.Database;
  /** The PostgreSQL pool (PostgreSQL only): for LISTEN/NOTIFY and cursors. */
  readonly pool?: pg.Pool;
  /** Where the database is, for logs: a file path or the URL without its password. */
  readonly describe: string;
  close(): Promise<void>;
}

export const DEFAULT_DATA_DIR = './.buildscope';

/** SQLite: the size the WAL file is cut back to when it restarts after a checkpoint. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

export async function openDatabase(location: DatabaseLocation): Promise<DatabaseHandle> {
  if (location.url !== undefined) {
    if (!isPostgresUrl(location.url)) {
      throw new DatabaseLocationError(`not a PostgreSQL URL: ${redact(location.url)} (the database is PostgreSQL, postgres://..., or SQLite in a data directory)`);
    }
    const handle = openPostgres(location.url);
    try {
      // One round trip now, so that an unreachable server is reported as such (and not as a failed migration).
      await handle.pool!.query('SELECT 1');
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw new DatabaseLocationError(`cannot connect to ${handle.describe}: ${connectionProblem(e)}`, { cause: e });
    }
    if (location.mustExist === true) {
      // Any component's migration table says Buildscope has used this database; an empty one
      // would get every table from the first migration, which a read-only command must not do.
      const r = await handle.pool!.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE '%\\_migration'`);
      if ((r.rows[0]?.n ?? 0) === 0) {
        await handle.close().catch(() => undefined);
        throw new DatabaseLocationError(`${handle.describe} holds no Buildscope database (no tables yet): run serve or ingest on it first`);
      }
    }
    return handle;
  }
  return openSqlite(location.data ?? DEFAULT_DATA_DIR, location.mustExist === true);
}

function connectionProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const words: Record<string, string> = { ECONNREFUSED: 'connection refused', ENOTFOUND: 'host not found', ETIMEDOUT: 'timed out', EHOSTUNREACH: 'host unreachable', ECONNRESET: 'connection reset' };
  if (code !== undefined && words[code] !== undefined) return words[code]!;
  if (e instanceof AggregateError && e.errors.length > 0) return connectionProblem(e.errors[0]);
  return (e as Error).message || String(e);
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

function openSqlite(dir: string, mustExist: boolean): DatabaseHandle {
  const full = resolve(dir);
  const file = join(full, 'buildscope.db');
  if (mustExist && !existsSync(file)) {
    throw new DatabaseLocationError(
      existsSync(full) ? `${dir} holds no Buildscope database (no buildscope.db there)` : `no data directory ${dir}: give --data DIR of an existing one, or --db URL`,
    );
  }
  mkdirSync(full, { recursive: true });
  const sqlite = new BetterSqlite3(file);
  // 4 KiB pages for a new database (the page size of an existing one stays; it takes effect only
  // before WAL is switched on). Several indexes take every build at a random position (the build
  // IDs of builds and build_events, unique custom values such as commit IDs, durations, IP
  // addresses); once they outgrow a transaction's keys each key dirties a page of its own, which
  // the commit writes to the WAL and the checkpoint again to the database. A quarter of the page
  // is a quarter of those bytes; since the events are stored compressed (0008) the larger pages
  // no longer save space (docs/store.md, "Ingest that scales with the data").
  sqlite.pragma('page_size = 4096');
  // 32 MiB of page cache instead of 2 MiB: ingest inserts into a dozen indexes at random
  // positions (start times, durations, values), whose pages should stay in memory between
  // batches. 64 MiB loaded a store of a million builds no faster (nor did 128 MiB: what costs is
  // the pages a commit dirties, written whatever the cache holds). 48 MiB until 2026-11-30: with
  // builds that carry their tests the ingest command's peak RSS passed its goal of 300 MB, and 32
  // MiB took 16 MB off it at the same rate (docs/store.md, "Ingest performance").
  sqlite.pragma('cache_size = -32768');
  sqlite.pragma('temp_store = MEMORY');
  // WAL: readers never block the writer; synchronous=NORMAL in WAL mode survives a process crash
  // (kill -9) without losing a committed transaction.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // A WAL that grew large (a bulk load lets it grow to a quarter of the database, at most 400 MB,
  // before a checkpoint: src/store/ingest/bulk-checkpoints.ts) is cut back to this when a checkpoint lets it restart, instead
  // of keeping its largest size on disk for as long as the database is open.
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    describe: file,
    async close() {
      await db.destroy();
    },
  };
}

function openPostgres(url: string): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    pool,
    describe: redact(url),
    async close() {
      await db.destroy();
    },
  };
}

/** The kysely migrator of one component, tracked in its own table (`<component>_migration`). */
function migrator(handle: DatabaseHandle, component: string, migrations: Record<string, Migration>): Migrator {
  return new Migrator({
    db: handle.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${component}_migration`,
    migrationLockTableName: `${component}_migration_lock`,
  });
}

/**
 * Runs one component's migrations, tracked in its own table, so that components migrate
 * independently in the shared database: all of them, or up to and including `upTo`. Safe to call
 * from several processes.
 */
export async function migrate(handle: DatabaseHandle, component: string, migrations: Record<string, Migration>, upTo?: string): Promise<void> {
  const m = migrator(handle, component, migrations);
  const { error, results } = upTo === undefined ? await m.migrateToLatest() : await m.migrateTo(upTo);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration of ${component}${failed ? ` (${failed.migrationName})` : ''} failed: ${String(error)}`);
  }
}

/** Whether the component's migration `name` has run on this database. */
export async function migrationRan(handle: DatabaseHandle, component: string, migrations: Record<string, Migration>, name: string): Promise<boolean> {
  return (await migrator(handle, component, migrations).getMigrations()).find((x) => x.name === name)?.executedAt !== undefined;
}
