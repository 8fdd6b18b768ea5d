// The `retention` section of the server configuration: all settings off by default.
//
//   retention:
//     maxAgeDays: 90                  # delete builds that started more than 90 days ago
//     minFreeDiskPercent: 10          # delete the oldest builds while less than 10% is free
//     rejectBelowFreeDiskPercent: 3   # answer POST /api/builds with 507 while less than 3% is free

import { ConfigError, type DatabaseSection } from '../config.js';

export interface RetentionConfig {
  readonly maxAgeDays?: number;
  readonly minFreeDiskPercent?: number;
  readonly rejectBelowFreeDiskPercent?: number;
}

const KNOWN = ['maxAgeDays', 'minFreeDiskPercent', 'rejectBelowFreeDiskPercent'] as const;

/** Checks the section (undefined: absent) against the database it will run on. */
export function parseRetentionConfig(raw: unknown, database: DatabaseSection): RetentionConfig {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError('retention must be a mapping');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!(KNOWN as readonly string[]).includes(k)) throw new ConfigError(`retention: unknown setting '${k}' (known: ${KNOWN.join(', ')})`);
  }
  const out: { -readonly [K in keyof RetentionConfig]: number } = {};
  const age = o['maxAgeDays'];
  if (age !== undefined && age !== null) {
    if (typeof age !== 'number' || !Number.isInteger(age) || age < 1 || age > 36500) throw new ConfigError(`retention.maxAgeDays must be a whole number of days from 1 to 36500, got ${JSON.stringify(age)}`);
    out.maxAgeDays = age;
  }
  for (const key of ['minFreeDiskPercent', 'rejectBelowFreeDiskPercent'] as const) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v >= 100) throw new ConfigError(`retention.${key} must be a percentage above 0 and below 100, got ${JSON.stringify(v)}`);
    // The server sees the disk of its own data directory only; PostgreSQL's disk is elsewhere.
    if (database.url !== undefined) throw new ConfigError(`retention.${key} needs the embedded SQLite database (database.data): the server cannot see the disk of a PostgreSQL server; watch that disk there, and use retention.maxAgeDays`);
    out[key] = v;
  }
  if (out.minFreeDiskPercent !== undefined && out.rejectBelowFreeDiskPercent !== undefined && out.rejectBelowFreeDiskPercent > out.minFreeDiskPercent) {
    throw new ConfigError(
      `retention.rejectBelowFreeDiskPercent (${out.rejectBelowFreeDiskPercent}) must not exceed retention.minFreeDiskPercent (${out.minFreeDiskPercent}): ingest would be refused while no build is deleted to make room`,
    );
  }
  return out;
}

/** Whether any retention setting is on. */
export function retentionEnabled(c: RetentionConfig): boolean {
  return c.maxAgeDays !== undefined || c.minFreeDiskPercent !== undefined || c.rejectBelowFreeDiskPercent !== undefined;
}
