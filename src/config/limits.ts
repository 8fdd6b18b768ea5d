// The `limits` section: the limits of the REST API. One descriptor of src/config/sections.ts.

import { defaultsOf, faultAt, type Agrees, type Fault } from './schema-check.js';
import { ownSection } from './section.js';

const MiB = 1024 * 1024;

export interface Limits {
  /** Builds per `GET /api/builds` response when `maxBuilds` is not given. */
  readonly maxBuildsDefault: number;
  /** Largest accepted `maxBuilds` (at most 1000). */
  readonly maxBuildsMax: number;
  /** Long-poll wait of `GET /api/builds` when `maxWaitSecs` is not given. */
  readonly maxWaitSecsDefault: number;
  /** Largest accepted `maxWaitSecs` (at most 20). */
  readonly maxWaitSecsMax: number;
  /** Default access token lifetime, capped by the authenticating credential's remaining life. */
  readonly tokenDefaultHours: number;
  /** Largest accepted `expiresInHours` (at most 24). */
  readonly tokenMaxHours: number;
  /** Lifetime of a new access key when none is given. */
  readonly accessKeyDefaultDays: number;
  /** Largest request body other than build ingest, in bytes. */
  readonly requestBodyBytes: number;
  /** Largest NDJSON ingest body of `POST /api/builds`, in bytes. */
  readonly ingestBodyBytes: number;
  /** Time limit of one search: a listing, count, facets, trends or value completion, all its statements together (PostgreSQL statement_timeout; SQLite search threads), in ms. */
  readonly searchTimeoutMs: number;
  /** Console output (ConsoleOutput text) kept per build (per ingest line), in bytes; the rest is cut at ingest and the build page says so. */
  readonly consoleBytesPerBuild: number;
  /** SQLite: memory of the analytics index (counts and facets of any query from memory; about 40 bytes a build), in bytes; 0 turns it off. */
  readonly analyticsIndexBytes: number;
}

/** Every bound is one the API itself promises: an operator may lower a limit, never raise it past them. */
export const limitsSchema = {
  description: 'Limits of the REST API.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    maxBuildsDefault: { description: 'Builds per GET /api/builds response when maxBuilds is not given.', type: 'integer', minimum: 0, maximum: 1000, default: 100 },
    maxBuildsMax: { description: 'Largest accepted maxBuilds.', type: 'integer', minimum: 0, maximum: 1000, default: 1000 },
    maxWaitSecsDefault: { description: 'Long-poll wait when maxWaitSecs is not given.', type: 'integer', minimum: 1, maximum: 20, default: 3 },
    maxWaitSecsMax: { description: 'Largest accepted maxWaitSecs.', type: 'integer', minimum: 1, maximum: 20, default: 20 },
    tokenDefaultHours: { description: 'Default access token lifetime.', type: 'integer', minimum: 1, maximum: 24, default: 2 },
    tokenMaxHours: { description: 'Largest accepted expiresInHours.', type: 'integer', minimum: 1, maximum: 24, default: 24 },
    accessKeyDefaultDays: { description: 'Lifetime of a new access key when none is given.', type: 'integer', minimum: 1, maximum: 36_500, default: 365 },
    requestBodyBytes: { description: 'Largest request body other than build ingest, in bytes.', type: 'integer', minimum: 1024, maximum: 1024 ** 3, default: MiB },
    ingestBodyBytes: { description: 'Largest NDJSON ingest body, in bytes.', type: 'integer', minimum: 1024, maximum: 64 * 1024 ** 3, default: 256 * MiB },
    searchTimeoutMs: { description: 'Time limit of one search (listing, count, facets, trends, value completion; all its statements together), in ms.', type: 'integer', minimum: 1, maximum: 600_000, default: 10_000 },
    consoleBytesPerBuild: {
      description: 'Console output kept per build (per ingest line), in bytes: the rest is cut at ingest and the build page says so.',
      type: 'integer',
      minimum: 0,
      maximum: 1024 ** 3,
      default: 4 * MiB,
    },
    analyticsIndexBytes: {
      description:
        'SQLite: memory the analytics index may take, in bytes (counts, facets and trends of any query from memory, about 90 bytes a demo build, 256 MiB holds about 3 million builds); past it, and at 0, they are read from the database.',
      type: 'integer',
      minimum: 0,
      maximum: 64 * 1024 ** 3,
      default: 256 * MiB,
    },
  },
} as const;

const agrees: Agrees<typeof limitsSchema, Limits> = true;
void agrees;

/** The limits when none is set: the schema's defaults. */
export const DEFAULT_LIMITS = defaultsOf(limitsSchema) as unknown as Limits;

export const limitsSection = ownSection({
  name: 'limits',
  schema: limitsSchema,
  faults(l: Limits): Fault[] {
    const faults: Fault[] = [];
    for (const [value, max] of [
      ['maxBuildsDefault', 'maxBuildsMax'],
      ['maxWaitSecsDefault', 'maxWaitSecsMax'],
      ['tokenDefaultHours', 'tokenMaxHours'],
    ] as const) {
      if (l[value] > l[max]) faults.push(faultAt([value], `is ${l[value]}, which exceeds limits.${max} (${l[max]})`));
    }
    return faults;
  },
  parse: (l: Limits): Limits => l,
});
