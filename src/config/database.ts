// The `database` section: a data directory of the embedded SQLite database or a postgres:// URL.
// One descriptor of src/config/sections.ts.

import { DEFAULT_DATA_DIR, isPostgresUrl } from '../db/database.js';
import { faultAt, type Agrees, type Fault } from './schema-check.js';
import { ownSection } from './section.js';

export interface DatabaseSection {
  /** Data directory of the embedded SQLite database (used when `url` is absent). */
  readonly data?: string;
  /** postgres:// URL; several server processes may share one PostgreSQL database. */
  readonly url?: string;
}

export const databaseSchema = {
  description: `The database: a data directory for the embedded SQLite database (default ${DEFAULT_DATA_DIR}) or a postgres:// URL, not both.`,
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    data: { description: 'Data directory of the embedded SQLite database.', type: 'string', minLength: 1 },
    url: { description: 'postgres:// URL; several server processes may share one PostgreSQL database.', type: 'string', minLength: 1 },
  },
} as const;

const agrees: Agrees<typeof databaseSchema, DatabaseSection> = true;
void agrees;

export const databaseSection = ownSection({
  name: 'database',
  schema: databaseSchema,
  faults(d: DatabaseSection): Fault[] {
    const faults: Fault[] = [];
    if (d.data !== undefined && d.url !== undefined) faults.push(faultAt([], 'give either data or url, not both'));
    if (d.url !== undefined && !isPostgresUrl(d.url)) faults.push(faultAt(['url'], `not a postgres:// URL: ${d.url}`));
    return faults;
  },
  parse: (d: DatabaseSection): DatabaseSection => (d.url !== undefined ? { url: d.url } : { data: d.data ?? DEFAULT_DATA_DIR }),
});
