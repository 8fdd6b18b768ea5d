// The `database` section: a data directory of the embedded SQLite database or a postgres:// URL.
// One descriptor of src/config/sections.ts.

import { DEFAULT_DATA_DIR, isPostgresUrl } from '../db/database.js';
import { faultAt, type Agrees, type Fault } from './schema-check.js';
import { readSecretFile, secretFileSetting } from './secret-file.js';
import { ownSection } from './section.js';

export interface DatabaseSection {
  /** Data directory of the embedded SQLite database (used when `url` is absent). */
  readonly data?: string;
  /** postgres:// URL; several server processes may share one PostgreSQL database. */
  readonly url?: string;
}

/** The section as the file gives it: the URL's password perhaps in a file of its own. */
export interface WrittenDatabaseSection extends DatabaseSection {
  /** File holding the password of `url`'s user, put into the URL when the configuration is loaded. */
  readonly passwordFile?: string;
}

export const databaseSchema = {
  description: `The database: a data directory for the embedded SQLite database (default ${DEFAULT_DATA_DIR}) or a postgres:// URL, not both.`,
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    data: { description: 'Data directory of the embedded SQLite database.', type: 'string', minLength: 1 },
    url: { description: 'postgres:// URL; several server processes may share one PostgreSQL database.', type: 'string', minLength: 1 },
    passwordFile: secretFileSetting("the password of url's user (url then without one)"),
  },
} as const;

const agrees: Agrees<typeof databaseSchema, WrittenDatabaseSection> = true;
void agrees;

export const databaseSection = ownSection({
  name: 'database',
  schema: databaseSchema,
  faults(d: WrittenDatabaseSection): Fault[] {
    const faults: Fault[] = [];
    if (d.data !== undefined && d.url !== undefined) faults.push(faultAt([], 'give either data or url, not both'));
    if (d.url !== undefined && !isPostgresUrl(d.url)) faults.push(faultAt(['url'], `not a postgres:// URL: ${d.url}`));
    else if (d.passwordFile !== undefined) {
      const url = d.url === undefined ? undefined : parsedUrl(d.url);
      if (url === undefined) faults.push(faultAt(['passwordFile'], 'is the password of url, which is not given'));
      // A URL without a host (a Unix socket in ?host=) has no place for a password.
      else if (url === null || url.host === '' || url.username === '') faults.push(faultAt(['url'], 'needs a user and a host (postgres://USER@HOST/DATABASE) for the password of passwordFile'));
      else if (url.password !== '') faults.push(faultAt([], 'give the password either in url or in passwordFile, not both'));
    }
    return faults;
  },
  parse: (d: WrittenDatabaseSection): DatabaseSection => (d.url !== undefined ? { url: withPassword(d.url, d.passwordFile) } : { data: d.data ?? DEFAULT_DATA_DIR }),
});

function parsedUrl(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

/** The URL with the password of `passwordFile` (percent-encoded: the driver decodes the user info). */
function withPassword(url: string, passwordFile: string | undefined): string {
  if (passwordFile === undefined) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(readSecretFile(passwordFile, ['database', 'passwordFile']));
  return u.href;
}
