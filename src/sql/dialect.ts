// The one place a dialect is chosen: `dialectOf` maps the database's dialect name to its hooks
// object (sqlite.ts, postgres.ts). The compiler and the store take that object and call its hooks
// (dialect-hooks.ts); a new dialect is one more object and one more case here.

import { assertNever } from '../query/assert.js';
import type { DialectName } from '../db/database.js';
import type { Dialect } from './dialect-hooks.js';
import { POSTGRES } from './postgres.js';
import { SQLITE } from './sqlite.js';

export type { Dialect, InfixStrategy, SearchExecution, StringTarget } from './dialect-hooks.js';
export { targetRef } from './dialect-hooks.js';

/** The name of a dialect, as a database handle carries it. */
export type SqlDialect = DialectName;

export function dialectOf(name: SqlDialect | Dialect): Dialect {
  if (typeof name !== 'string') return name;
  switch (name) {
    case 'sqlite':
      return SQLITE;
    case 'postgres':
      return POSTGRES;
    default:
      return assertNever(name, 'dialect');
  }
}
