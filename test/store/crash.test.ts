// The crash test: a child process ingesting a large file is killed with SIGKILL mid-way. After
// reopening, every build it reported stored is there, complete and intact, and no build is
// half-stored (events, attributes and child rows all present, or the build absent).

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveAttributes } from '../../src/store/events/derive.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { SEE_EVERYTHING, type BuildEvent, type IngestLineResult } from '../../src/store/types.js';
import type { ToolType } from '../../src/query/catalog.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, type TestStore } from './support.js';
import { CLI } from '../support/compiled-cli.js';

const BUILDS = 3000;
const lines = [...demoBuilds({ builds: BUILDS, seed: 42, now: 1_800_000_000_000 })];
const file = join(tmpdir(), `bs-crash-${process.pid}.ndjson`);

interface Line {
  buildId: string;
  toolType: ToolType;
  toolVersion: string;
  agentVersion: string;
  events: BuildEvent[];
}
const byId = new Map<string, Line>(lines.map((l) => {
  const o = JSON.parse(l) as Line;
  return [o.buildId, o];
}));

describe.each([
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
])('kill -9 during ingest on $name', ({ name, skip }) => {
  let t: TestStore;
  beforeAll(async () => {
    if (skip) return;
    writeFileSync(file, lines.join('\n') + '\n');
    t = await openTestStore(name);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(file, { force: true });
  });

  it.skipIf(skip)('loses no reported build and leaves no half-stored build', async () => {
    const where = t.location.url !== undefined ? ['--db', t.location.url] : ['--data', t.location.data!];
    const child = spawn(process.execPath, [...CLI, 'ingest', file, '--json', '--batch-size', '25', ...where], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reported: IngestLineResult[] = [];
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const rl = createInterface({ input: child.stdout });
    let killed = false;
    for await (const text of rl) {
      reported.push(JSON.parse(text) as IngestLineResult);
      // Mid-way: well after the first commits, long before the end.
      if (!killed && reported.length >= 500) {
        child.kill('SIGKILL');
        killed = true;
      }
    }
    const { signal } = await exited;
    expect(signal, stderr).toBe('SIGKILL');
    expect(reported.length).toBeGreaterThanOrEqual(500);
    expect(reported.length).toBeLessThan(BUILDS);

    // Reopen (the test store's handle is a second connection; a new one sees the same state).
    const stored = new Set(reported.flatMap((r) => (r.status === 'stored' ? [r.buildId] : [])));
    expect(stored.size).toBe(reported.length);
    const available = await t.store.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true });
    const ids = new Set(available.map((b) => b.id));
    for (const id of stored) expect(ids.has(id), `reported build ${id} is missing`).toBe(true);

    // Every build present is whole: all its events, the derived attributes, and its child rows.
    const db = t.handle.db;
    const all = await db.selectFrom('builds').select(['id', 'seq', 'attributes']).execute();
    expect(all.every((b) => b.seq !== null)).toBe(true);
    for (const b of available) {
      const source = byId.get(b.id)!;
      const events: BuildEvent[] = [];
      for await (const e of t.store.streamEvents(b.id)) events.push(e);
      expect(events).toEqual(source.events);
      const derived = deriveAttributes(source, source.events);
      expect('attributes' in b && b.attributes).toEqual(derived.attributes);
    }
    // In either table: the latest custom values and values of spread fields are gathered apart (store/ingest/recent-rows.ts).
    const rows = async (tables: readonly ('build_values' | 'build_values_recent' | 'build_custom_values' | 'build_custom_values_recent')[]): Promise<number> => {
      let n = 0;
      for (const table of tables) n += Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      return n;
    };
    const valueCount = await rows(['build_values', 'build_values_recent']);
    const customCount = await rows(['build_custom_values', 'build_custom_values_recent']);
    let expectValues = 0;
    let expectCustom = 0;
    for (const b of available) {
      const source = byId.get(b.id)!;
      const d = deriveAttributes(source, source.events);
      expectValues += d.values.length;
      expectCustom += d.customValues.length;
    }
    expect(valueCount).toBe(expectValues);
    expect(customCount).toBe(expectCustom);
    const chunkCount = Number((await db.selectFrom('build_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    expect(chunkCount).toBe(available.length);

    // Sending the whole file again completes the store: the stored part is unchanged.
    const again = await t.store.ingestNdjson(lines.join('\n'));
    const unchanged = again.filter((r) => r.status === 'unchanged').length;
    expect(unchanged).toBe(available.length);
    expect(again.filter((r) => r.status === 'stored').length).toBe(BUILDS - available.length);
    expect(await t.store.latestSeq()).toBe(BUILDS);
  }, 120_000);
});
