// Shared by `user` and `access-key`: open the configured database's auth component, run, close.
// (Files starting with `_` are not commands.)

import type { CliDatabaseOptions, ServerConfig } from '../../config.js';
import { cliConfig } from './_config.js';
import { fail as failWith } from './_fail.js';
import { openDatabase } from '../../db/database.js';
import { openAuth, UserError, type Auth } from '../../auth/index.js';

export const fail: (message: string) => never = (message) => failWith('', message);

/**
 * Runs with the auth component of the configured database. `readOnly`: a database that does not
 * exist is refused instead of created (list commands).
 */
export async function withAuth(opts: CliDatabaseOptions, run: (auth: Auth, config: ServerConfig) => Promise<void>, how: { readOnly?: boolean } = {}): Promise<void> {
  const config = cliConfig('', opts);
  const database = await openDatabase({ ...config.database, mustExist: how.readOnly === true });
  try {
    await run(await openAuth(database, config), config);
  } catch (e) {
    if (e instanceof UserError) {
      await database.close();
      fail(e.message);
    }
    throw e;
  } finally {
    await database.close().catch(() => undefined);
  }
}

/** A table of left-aligned columns under a header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
