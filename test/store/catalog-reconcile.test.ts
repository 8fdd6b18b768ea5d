// Adding a search field is one catalog entry (a multi-valued one also takes the next code in
// sql/value-fields.ts, which stored rows carry): a database made with today's catalog, opened by a
// build whose catalog has more fields, gets their columns and indexes, derives their values for
// the builds it already holds, and ingests and searches new builds, on both databases.
//
// The "later" catalog is today's with three more fields: a generic single-valued String field
// searched by infix (a new column, btree index and trigram column), a generic number (a new
// column whose index is keyed by the value's bucket on SQLite, sql/value-buckets.ts) and a
// multi-valued tool-specific one (new child rows). The store modules are loaded afresh over it.

import { afterAll, describe, expect, it, vi } from 'vitest';
import type * as Catalog from '../../src/query/catalog.js';
import type { FieldDef } from '../../src/query/catalog.js';
import type { DatabaseHandle, DialectName } from '../../src/db/database.js';
import { SEE_EVERYTHING, type BuildSummary } from '../../src/store/types.js';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { ev, line } from './support.js';
import { SPREAD_VALUE_FIELDS, VALUE_FIELD_CODES } from '../../src/sql/value-fields.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NEW_GENERIC: FieldDef = {
  name: 'agentOperatingSystem',
  type: 'string',
  tool: null,
  multi: false,
  infix: true,
  description: 'Operating system of the build machine, for every tool.',
  column: 'agentoperatingsystem',
  source: { kind: 'event', eventType: 'Environment', path: ['operatingSystem'] },
};
const NEW_NUMBER: FieldDef = {
  name: 'agentCpuCores',
  type: 'number',
  tool: null,
  multi: false,
  description: 'Number of CPU cores of the build machine, for every tool.',
  column: 'agentcpucores',
  source: { kind: 'event', eventType: 'Environment', path: ['numberOfCpuCores'] },
};
const NEW_MULTI: FieldDef = {
  name: 'native.excludedTasks',
  type: 'string',
  tool: 'native',
  multi: true,
  description: 'Tasks excluded from the build.',
  column: 'native_excludedtasks',
  source: { kind: 'event', eventType: 'BuildRequestedTasks', path: ['excluded'] },
};

function build(id: string, os: string, excluded: string[], cores: number): string {
  return line({
    buildId: id,
    events: [
      ev('BuildStarted'),
      ev('ProjectStructure', { rootProjectName: 'alpha' }),
      ev('BuildRequestedTasks', { requested: ['build'], excluded }),
      ev('Environment', { operatingSystem: os, numberOfCpuCores: cores }),
      ev('BuildFinished', { outcome: 'succeeded', failures: [] }),
    ],
  });
}

interface Opened {
  readonly handle: DatabaseHandle;
  search(query: string): Promise<string[]>;
  /** The database's plan of a query's search statement. */
  plan(query: string): Promise<string>;
  ingest(text: string): Promise<void>;
  attributes(id: string): Promise<Record<string, unknown> | undefined>;
  close(): Promise<void>;
}

/** Loads the store modules afresh, over the real catalog or one with the three new fields. */
async function open(location: { data?: string; url?: string }, withNewFields: boolean): Promise<Opened> {
  vi.resetModules();
  if (withNewFields) {
    vi.doMock('../../src/query/catalog.js', async (importOriginal) => {
      const real = await importOriginal<typeof Catalog>();
      const fields = [...real.FIELDS, NEW_GENERIC, NEW_NUMBER, NEW_MULTI];
      const byName = new Map(fields.map((f) => [f.name.toLowerCase(), f]));
      return {
        ...real,
        FIELDS: fields,
        findField: (name: string) => byName.get(name.toLowerCase()),
        fieldsOfTool: (tool: string) => fields.filter((f) => f.tool === null || f.tool === tool),
      };
    });
    // The new multi-valued field's code, the next one after today's (the module itself, loaded
    // over the later catalog, would refuse a field without one).
    vi.doMock('../../src/sql/value-fields.js', () => {
      const codes: Record<string, number> = { ...VALUE_FIELD_CODES, [NEW_MULTI.column]: Math.max(...Object.values(VALUE_FIELD_CODES)) + 1 };
      return {
        VALUE_FIELD_CODES: codes,
        valueFieldCode: (column: string) => {
          const code = codes[column];
          if (code === undefined) throw new RangeError(`${column} has no code`);
          return code;
        },
        valueFieldCodeCase: (column: string) => `CASE ${column} ${Object.entries(codes).map(([n, c]) => `WHEN '${n}' THEN ${c}`).join(' ')} END`,
        SPREAD_VALUE_FIELDS,
      };
    });
  } else {
    vi.doUnmock('../../src/query/catalog.js');
    vi.doUnmock('../../src/sql/value-fields.js');
  }
  const { openDatabase } = await import('../../src/db/database.js');
  const { openBuildStore } = await import('../../src/store/build-store.js');
  const { parseQuery } = await import('../../src/query/parse.js');
  const { explainPlan } = await import('../../src/sql/index.js');
  const handle = await openDatabase(location);
  const store = await openBuildStore(handle);
  return {
    handle,
    async search(query) {
      const parsed = parseQuery(query);
      if (!parsed.ok) throw new Error(parsed.diagnostics.map((d) => d.message).join('; '));
      const builds = (await store.listBuilds({ visibility: SEE_EVERYTHING, query: parsed.expr! })) as BuildSummary[];
      return builds.map((b) => b.id).sort();
    },
    async plan(query) {
      return explainPlan(handle, parseQuery(query).expr!);
    },
    async ingest(text) {
      const results = await store.ingestNdjson(text);
      expect(results.map((r) => r.status)).toEqual(results.map(() => 'stored'));
    },
    async attributes(id) {
      return (await store.getBuild(id, SEE_EVERYTHING, { withAttributes: true }))?.attributes as Record<string, unknown> | undefined;
    },
    async close() {
      await store.close();
      await handle.close();
    },
  };
}

async function scenario(location: { data?: string; url?: string }): Promise<void> {
  // Today's catalog: two builds stored.
  const before = await open(location, false);
  await before.ingest([build('old0000000001', 'Linux', ['test'], 4), build('old0000000002', 'Mac OS X', [], 16)].join('\n'));
  await expect(before.search('agentOperatingSystem:linux')).rejects.toThrow(/agentOperatingSystem/);
  await before.close();

  // A later catalog opens the same database.
  const after = await open(location, true);
  try {
    // The stored builds got the new fields, derived from their events.
    expect(await after.search('agentOperatingSystem:linux')).toEqual(['old0000000001']);
    expect(await after.search('agentOperatingSystem:*os*')).toEqual(['old0000000002']);
    expect(await after.search('native.excludedTasks:test')).toEqual(['old0000000001']);
    expect(await after.search('native.excludedTasks:*es*')).toEqual(['old0000000001']);
    expect(await after.search('agentCpuCores>8')).toEqual(['old0000000002']);
    expect(await after.search('agentCpuCores:4')).toEqual(['old0000000001']);
    expect(await after.attributes('old0000000001')).toMatchObject({ agentOperatingSystem: 'Linux', 'native.excludedTasks': ['test'] });
    // New builds ingest and search through the new column, indexes and child rows.
    await after.ingest(build('new0000000001', 'Windows 11', ['lint', 'test'], 12));
    expect(await after.search('agentCpuCores:[10 to 16]')).toEqual(['new0000000001', 'old0000000002']);
    // SQLite: the new number's index is keyed by its bucket, and a range seeks it.
    if (after.handle.dialect === 'sqlite') expect(await after.plan('agentCpuCores:[10 to 16]')).toMatch(/USING INDEX builds_agentcpucores_bucket_idx/);
    expect(await after.search('agentOperatingSystem:windows*')).toEqual(['new0000000001']);
    expect(await after.search('agentOperatingSystem:*dows*')).toEqual(['new0000000001']);
    expect(await after.search('native.excludedTasks:test')).toEqual(['new0000000001', 'old0000000001']);
    expect(await after.search('-native.excludedTasks:lint project:alpha')).toEqual(['old0000000001', 'old0000000002']);
    // The old ones still answer the old searches.
    expect(await after.search('project:alpha')).toEqual(['new0000000001', 'old0000000001', 'old0000000002']);
  } finally {
    await after.close();
  }

  // Opening again reconciles nothing more and derives nothing twice.
  const again = await open(location, true);
  try {
    const { reconcileCatalog } = await import('../../src/store/schema/reconcile.js');
    expect(await reconcileCatalog(again.handle)).toEqual({ addedColumns: [], rebuiltTrigram: false, newFields: [], backfilled: 0 });
    expect(await again.search('native.excludedTasks:test')).toEqual(['new0000000001', 'old0000000001']);
  } finally {
    await again.close();
    vi.doUnmock('../../src/query/catalog.js');
    vi.doUnmock('../../src/sql/value-fields.js');
    vi.resetModules();
  }
}

const dirs: string[] = [];
const pgs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const p of pgs) await p.drop();
});

describe.each<DialectName>(['sqlite', 'postgres'])('a field added to the catalog (%s)', (dialect) => {
  it.skipIf(dialect === 'postgres' && !pgAvailable())('reaches a database created before it: column, indexes, values of stored builds, ingest and search', async () => {
    if (dialect === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'bs-reconcile-'));
      dirs.push(dir);
      await scenario({ data: dir });
    } else {
      const pg = (await createTestDatabase())!;
      pgs.push(pg);
      await scenario({ url: pg.url });
    }
  });
});
