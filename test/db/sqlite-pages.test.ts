// The SQLite page size: 4 KiB for a new database (fewer bytes written per random index insert,
// docs/store.md "Ingest that scales with the data"); a database made with 16 KiB pages keeps them
// and works as before.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'bs-pages-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function ingestAndList(dir: string): Promise<{ pageSize: number; stored: number; listed: number }> {
  const handle = await openDatabase({ data: dir });
  try {
    const store = await openBuildStore(handle, { ingestWorker: false });
    const results = await store.ingestNdjson([...demoBuilds({ builds: 12, seed: 5, now: Date.parse('2026-06-01T00:00:00Z') })].join('\n'), { keepResults: true });
    const listed = await store.listBuilds({ visibility: SEE_EVERYTHING, maxBuilds: 100 });
    await store.close();
    return {
      pageSize: Number(handle.sqlite!.pragma('page_size', { simple: true })),
      stored: results.filter((r) => r.status === 'stored').length,
      listed: listed.length,
    };
  } finally {
    await handle.close();
  }
}

describe('SQLite page size', () => {
  it('is 4 KiB for a new database', async () => {
    const r = await ingestAndList(tempDir());
    expect(r).toEqual({ pageSize: 4096, stored: 12, listed: 12 });
  });

  it('stays 16 KiB for a database made with 16 KiB pages, which keeps working', async () => {
    const dir = tempDir();
    const old = new BetterSqlite3(join(dir, 'buildscope.db'));
    old.pragma('page_size = 16384');
    old.pragma('journal_mode = WAL');
    old.close();
    const r = await ingestAndList(dir);
    expect(r).toEqual({ pageSize: 16384, stored: 12, listed: 12 });
  });
});
