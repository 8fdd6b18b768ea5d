// A consistent copy of a live embedded data directory: the SQLite database through SQLite's online
// backup API (a snapshot of committed data, WAL included, while a server keeps writing), then the
// directory's other files (provenance keys and attestation objects live there by default). The
// copy is a data directory of its own: `--data DEST` opens it.

import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

export const DATABASE_FILE = 'buildscope.db';

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

export interface BackupProgress {
  readonly totalPages: number;
  readonly remainingPages: number;
}

export interface BackupResult {
  readonly databaseBytes: number;
  /** Other entries of the data directory copied next to the database. */
  readonly otherEntries: readonly string[];
}

/** Pages copied per step: small steps let a server's writes go on between them. */
const PAGES_PER_STEP = 1024;

export async function backupDataDirectory(source: string, dest: string, onProgress?: (p: BackupProgress) => void): Promise<BackupResult> {
  const from = resolve(source);
  const to = resolve(dest);
  const file = join(from, DATABASE_FILE);
  if (!existsSync(file)) throw new BackupError(`no Buildscope database in ${from} (expected ${DATABASE_FILE})`);
  if (to === from) throw new BackupError('the backup must go to another directory than the data directory');
  if (existsSync(to) && (!statSync(to).isDirectory() || readdirSync(to).length > 0)) throw new BackupError(`${to} exists and is not an empty directory`);
  mkdirSync(to, { recursive: true });
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    // Written under another name and renamed when complete: an interrupted backup never leaves
    // a file that looks like a database.
    await db.backup(join(to, `${DATABASE_FILE}.partial`), {
      progress: (p) => {
        onProgress?.(p);
        return PAGES_PER_STEP;
      },
    });
  } finally {
    db.close();
  }
  renameSync(join(to, `${DATABASE_FILE}.partial`), join(to, DATABASE_FILE));
  const otherEntries: string[] = [];
  for (const entry of readdirSync(from)) {
    // The database, its WAL and shared-memory files are in the snapshot already.
    if (entry === DATABASE_FILE || entry.startsWith(`${DATABASE_FILE}-`)) continue;
    cpSync(join(from, entry), join(to, entry), { recursive: true, preserveTimestamps: true });
    otherEntries.push(entry);
  }
  return { databaseBytes: statSync(join(to, DATABASE_FILE)).size, otherEntries };
}
