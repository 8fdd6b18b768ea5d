// The SQLite trigram tables filled in bulk by the ingest (src/sql/indexes.ts `trigramBatch`) must
// hold exactly what the per-row triggers would: FTS5's integrity-check compares each external
// content table's index with its content, the value terms are exactly the distinct values of the
// child rows, and infix searches must find the builds.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { parseQuery } from '../../src/query/index.js';
import { valueFieldCode } from '../../src/sql/value-fields.js';
import type { BuildWithAttributes } from '../../src/store/types.js';
import { openTestStore, type TestStore } from './support.js';

const TRIGRAM_TABLES = ['builds_trigram', 'build_value_terms_trigram', 'build_custom_values_trigram'];

describe('SQLite trigram tables kept in bulk by the ingest', () => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore('sqlite');
  });
  afterAll(async () => t?.close());

  const integrity = (): void => {
    const db = t.handle.sqlite!;
    for (const table of TRIGRAM_TABLES) db.exec(`INSERT INTO ${table}(${table}, rank) VALUES ('integrity-check', 1)`);
    expect(db.prepare('SELECT count(*) FROM search_trigram_deferred').pluck().get()).toBe(0);
    // Nothing is deleted here, so the terms are exactly the distinct (field, value) pairs, of
    // build_values and of the values gathered apart (store/ingest/recent-rows.ts).
    const pairs = (from: string): string[] =>
      (db.prepare(`SELECT DISTINCT field, value FROM ${from} ORDER BY field, value`).all() as { field: string; value: string }[]).map((r) => `${r.field}=${r.value}`);
    const terms = pairs('build_value_terms');
    expect(terms.length).toBeGreaterThan(0);
    expect(terms).toEqual(pairs('(SELECT field, value FROM build_values UNION ALL SELECT field, value FROM build_values_recent)'));
  };

  it('indexes complete builds, builds completed in a later batch, and direct writes', async () => {
    const lines = [...demoBuilds({ builds: 60, seed: 7, now: 1_767_225_600_000 })];
    // Split some builds in two parts: the first part (no BuildFinished) in one batch, the rest later.
    const first: string[] = [];
    const later: string[] = [];
    for (const [i, l] of lines.entries()) {
      const b = JSON.parse(l) as { events: { type: { eventType: string } }[] };
      if (i % 3 !== 0) {
        first.push(l);
        continue;
      }
      const cut = b.events.findIndex((e) => e.type.eventType === 'BuildFinished');
      first.push(JSON.stringify({ ...b, events: b.events.slice(0, cut) }));
      later.push(JSON.stringify({ ...b, events: b.events.slice(cut) }));
    }
    const r1 = await t.store.ingestNdjson(first.join('\n'), { batchSize: 7 });
    expect(r1.every((r) => r.status === 'stored')).toBe(true);
    integrity();
    const r2 = await t.store.ingestNdjson(later.join('\n'), { batchSize: 5 });
    expect(r2.every((r) => r.status === 'stored' && r.complete)).toBe(true);
    integrity();
    // Re-sends change nothing.
    const r3 = await t.store.ingestNdjson(lines.join('\n'));
    expect(r3.every((r) => r.status === 'unchanged')).toBe(true);
    integrity();

    // Writers other than the ingest keep the insert triggers.
    const db = t.handle.sqlite!;
    const seq = Number(db.prepare('SELECT max(seq) FROM builds').pluck().get());
    // The field by its code (store migration 0016).
    db.prepare('INSERT INTO build_values (seq, field, value) VALUES (?, ?, ?)').run(seq, valueFieldCode('tag'), 'direct-write-tag');
    integrity();
    const hit = db.prepare("SELECT count(*) FROM build_value_terms_trigram WHERE build_value_terms_trigram MATCH '\"ct-write-t\"'").pluck().get();
    expect(hit).toBe(1);
    const found = await t.store.listBuilds({ visibility: { projects: 'all', withoutProject: true }, query: parseQuery('tag:*write-t*').expr! });
    expect(found.map((b) => b.seq)).toEqual([seq]);
  });

  it('finds every build by an infix of its user through the trigram table', async () => {
    const parsed = parseQuery('user:*enki*');
    expect(parsed.ok).toBe(true);
    const all = await t.store.listBuilds({ visibility: { projects: 'all', withoutProject: true }, maxBuilds: 1000 });
    const users = await t.store.listBuilds({ visibility: { projects: 'all', withoutProject: true }, maxBuilds: 1000, withAttributes: true });
    const expected = (users as BuildWithAttributes[]).filter((b) => {
      const user = b.attributes['user'];
      return typeof user === 'string' && user.toLowerCase().includes('enki');
    });
    const got = await t.store.listBuilds({ visibility: { projects: 'all', withoutProject: true }, maxBuilds: 1000, query: parsed.expr! });
    expect(all.length).toBe(60);
    expect(expected.length).toBeGreaterThan(0);
    expect(got.map((b) => b.id)).toEqual(expected.map((b) => b.id));
  });
});
