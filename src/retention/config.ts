// The `retention` section of the server configuration: all settings off by default. Its JSON Schema
// is the one place each setting is made; its descriptor in src/config/sections.ts puts it into the
// whole file's schema.
//
//   retention:
//     maxAgeDays: 90                  # delete builds that started more than 90 days ago
//     minFreeDiskPercent: 10          # delete the oldest builds while less than 10% is free
//     rejectBelowFreeDiskPercent: 3   # answer POST /api/builds with 507 while less than 3% is free

import { checkSection, compileSchema, faultAt, throwFaults, within, type Agrees, type Fault } from '../config/schema-check.js';

export interface RetentionConfig {
  readonly maxAgeDays?: number;
  readonly minFreeDiskPercent?: number;
  readonly rejectBelowFreeDiskPercent?: number;
}

const percent = { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 100 } as const;

export const retentionSchema = {
  description: 'Deleting old builds and watching free disk space; every setting is off when absent.',
  type: 'object',
  additionalProperties: false,
  properties: {
    maxAgeDays: { description: 'Delete builds that started more than this many days ago.', type: 'integer', minimum: 1, maximum: 36_500 },
    minFreeDiskPercent: { ...percent, description: 'Delete the oldest builds while less than this share of the disk is free.' },
    rejectBelowFreeDiskPercent: { ...percent, description: 'Refuse ingest (507) while less than this share of the disk is free.' },
  },
} as const;

const agrees: Agrees<typeof retentionSchema, RetentionConfig> = true;
void agrees;

export const retentionValidator = compileSchema(retentionSchema);

/** What the schema cannot say: settings that depend on each other or on the database, at paths relative to the section. */
export function retentionFaults(c: RetentionConfig, database: { readonly url?: string | undefined; readonly data?: string | undefined }): Fault[] {
  const faults: Fault[] = [];
  for (const key of ['minFreeDiskPercent', 'rejectBelowFreeDiskPercent'] as const) {
    // The server sees the disk of its own data directory only; PostgreSQL's disk is elsewhere.
    if (c[key] !== undefined && database.url !== undefined) {
      faults.push(faultAt([key], 'needs the embedded SQLite database (database.data): the server cannot see the disk of a PostgreSQL server; watch that disk there, and use retention.maxAgeDays'));
    }
  }
  if (c.minFreeDiskPercent !== undefined && c.rejectBelowFreeDiskPercent !== undefined && c.rejectBelowFreeDiskPercent > c.minFreeDiskPercent) {
    faults.push(
      faultAt(['rejectBelowFreeDiskPercent'], `is ${c.rejectBelowFreeDiskPercent}, which must not exceed retention.minFreeDiskPercent (${c.minFreeDiskPercent}): ingest would be refused while no build is deleted to make room`),
    );
  }
  return faults;
}

/** Checks the section (undefined: absent) against the database it will run on. */
export function parseRetentionConfig(raw: unknown, database: { readonly url?: string | undefined; readonly data?: string | undefined }): RetentionConfig {
  const c = checkSection<RetentionConfig>(retentionValidator, raw, ['retention']);
  throwFaults(within(['retention'], retentionFaults(c, database)));
  return c;
}

/** Whether any retention setting is on. */
export function retentionEnabled(c: RetentionConfig): boolean {
  return c.maxAgeDays !== undefined || c.minFreeDiskPercent !== undefined || c.rejectBelowFreeDiskPercent !== undefined;
}
