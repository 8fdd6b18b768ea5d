// The compiled SQL reaches for the right index: plan tests on SQLite (EXPLAIN QUERY PLAN) and
// PostgreSQL (EXPLAIN, after ANALYZE on enough rows that a scan is not cheaper).

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { explainPlan, explainSql } from '../../src/sql/index.js';
import { pgAvailable } from '../support/postgres.js';
import { insertBuilds, openSearchDb, type SearchDb, type TestBuild } from './support/search-db.js';
import { valueFieldCode } from '../../src/sql/value-fields.js';

const parse = (text: string): CheckedExpr => {
  const r = parseQuery(text, { now: Date.UTC(2024, 2, 10) });
  if (!r.expr) throw new Error(text);
  return r.expr;
};

const USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'];

function corpus(n: number): TestBuild[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `p${i}`,
    toolType: i % 2 ? 'native' : 'jsbuild',
    attributes: {
      buildTool: i % 2 ? 'native' : 'jsbuild',
      user: `${USERS[i % USERS.length]}-${i}`,
      hostname: `host-${i % 97}.example.com`,
      project: `project-${i % 50}`,
      buildStartTime: Date.UTC(2024, 0, 1) + i * 60_000,
      buildDuration: (i % 600) * 1000,
      buildOutcome: i % 7 ? 'succeeded' : 'failed',
      tag: [`tag-${i % 30}`, i % 3 ? 'ci' : 'local'],
      requested: [`task-${i % 40}`, 'build'],
      // A unique commit per build next to a repetitive branch: the custom values' shape at scale.
      value: [{ name: 'branch', value: `feature-${i % 200}` }, { name: 'commit', value: `c${(i * 7919).toString(16).padStart(8, '0')}` }],
    },
  }));
}

describe('SQLite plans', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('sqlite');
    await insertBuilds(db.handle, corpus(2000), { bulk: true });
    db.handle.sqlite!.exec('ANALYZE');
  }, 300_000);
  afterAll(async () => db?.close());

  const plan = (q: string) => explainPlan(db.handle, parse(q));

  it('an exact match seeks the column index', async () => {
    expect(await plan('user:alice-8')).toMatch(/SEARCH builds USING INDEX builds_user_idx \(user=\?\)/);
  });
  it('a prefix pattern is an index range scan', async () => {
    expect(await plan('user:ali*')).toMatch(/SEARCH builds USING INDEX builds_user_idx \(user>\? AND user<\?\)/);
  });
  it('an infix pattern with >= 3 characters uses the trigram table', async () => {
    const p = await plan('hostname:*st-4*');
    expect(p).toMatch(/SCAN builds_trigram VIRTUAL TABLE/);
    expect(p).toMatch(/SEARCH builds USING INDEX sqlite_autoindex_builds_\d \(seq=\?\)/);
  });
  it('the trigram tables keep no positions: an infix asks for every trigram of its literal, without a column filter, then the LIKE decides', async () => {
    const sqlOf = (q: string) => explainSql(parse(q), 'sqlite');
    const host = sqlOf('hostname:*st-4*');
    expect(host.parameters).toContain('"st-" AND "t-4"');
    expect(host.sql).toMatch(/"builds_trigram" MATCH \?/);
    expect(host.sql).toMatch(/"hostname" LIKE \? ESCAPE/);
    // A custom value's infix: candidates from its trigram table, then the LIKE on the value.
    const kv = sqlOf('value:*=*0001e*');
    expect(kv.parameters).toContain('"000" AND "001" AND "01e"');
    const p = await plan('value:*=*0001e*');
    expect(p).toMatch(/SCAN build_custom_values_trigram VIRTUAL TABLE/);
    // Too short for a trigram: the LIKE alone.
    expect(await plan('hostname:*st*')).not.toMatch(/builds_trigram/);
    for (const t of ['builds_trigram', 'build_custom_values_trigram']) {
      expect(db.handle.sqlite!.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(t)).toMatch(/detail=none/);
    }
  });
  it('an infix pattern on a multi-valued field matches the distinct terms by trigram, then reads each term\'s builds by exact value', async () => {
    const p = await plan('requested:*sk-1*');
    expect(p).toMatch(/SCAN build_value_terms_trigram VIRTUAL TABLE/);
    expect(p).toMatch(/SEARCH v USING PRIMARY KEY \(field=\? AND value=\?\)/);
    // Short literals have no trigram: still the terms, never every child row of the field.
    const short = await plan('requested:*k*');
    expect(short).toMatch(/SEARCH t USING COVERING INDEX sqlite_autoindex_build_value_terms_1 \(field=\?\)/);
    expect(short).toMatch(/SEARCH v USING PRIMARY KEY \(field=\? AND value=\?\)/);
  });
  it('a time range is a range on the indexed column', async () => {
    expect(await plan('buildStartTime:[2024-01-01T01:00 to 2024-01-01T02:00]')).toMatch(
      /SEARCH builds USING INDEX builds_buildstarttime_idx \(buildstarttime>\? AND buildstarttime<\?\)/,
    );
  });
  // Since store migration 0015 the child rows are a WITHOUT ROWID table keyed by
  // (field, value, seq): its primary key is the covering index.
  it('a tag is answered from the covering index of the child rows', async () => {
    expect(await plan('tag:tag-7')).toMatch(/SEARCH v USING PRIMARY KEY \(field=\? AND value=\?\)/);
  });
  it('an IP address (a spread field) is sought in build_values and in the recent values', async () => {
    const exact = await plan('jvmbuild.environment.localIPAddress:10.0.0.1');
    expect(exact).toMatch(/SEARCH v USING PRIMARY KEY \(field=\? AND value=\?\)/);
    expect(exact).toMatch(/SEARCH r USING COVERING INDEX build_values_recent_search \(field=\? AND value=\?\)/);
    // An infix: the matching terms first, each sought in both indexes.
    const infix = await plan('jvmbuild.environment.localIPAddress:*.0.1*');
    expect(infix).toMatch(/build_value_terms/);
    expect(infix).toMatch(/SEARCH r USING COVERING INDEX build_values_recent_search \(field=\? AND value=\?\)/);
    expect(infix).not.toMatch(/SCAN (v|r)\b/);
  });
  it('a key-value pair is answered from the covering index of custom values', async () => {
    expect(await plan('value:branch=feature-1*')).toMatch(/SEARCH c USING COVERING INDEX build_custom_values_search_idx \(name=\? AND value>\? AND value<\?\)/);
  });
  it('a value under any name walks the distinct names of (name, value, seq) and seeks the value under each, never scanning', async () => {
    for (const q of ['value:*=feature-1', 'value:*=c00001eef', 'value:*=feature-1*', 'value:*anc*=feature-1', 'value:br*=feature-1']) {
      const p = await plan(q);
      // The walk: one seek after the previous name (min(name) … name > ?), from the recursive CTE.
      expect(p, q).toMatch(/SEARCH w USING COVERING INDEX build_custom_values_search_idx \(name>\?( AND name<\?)?\)/);
      expect(p, q).toMatch(/RECURSIVE STEP/);
      // Then, per name, a seek of the value in the same index.
      expect(p, q).toMatch(/SEARCH c USING COVERING INDEX build_custom_values_search_idx \(name=\? AND value(=\?|>\? AND value<\?)\)/);
      expect(p, q).not.toMatch(/SCAN (c|w|r|build_custom_values|build_custom_values_recent)\b/);
      expect(p, q).not.toMatch(/build_custom_values_value_idx|build_custom_values_trigram/);
      // The same walk over the custom values gathered since the last move (store/ingest/recent-rows.ts).
      expect(p, q).toMatch(/SEARCH w USING COVERING INDEX build_custom_values_recent_search \(name>\?( AND name<\?)?\)/);
      expect(p, q).toMatch(/SEARCH c USING COVERING INDEX build_custom_values_recent_search \(name=\? AND value(=\?|>\? AND value<\?)\)/);
    }
  });
  it('seeks the recent custom values in their own index next to the indexed ones, and probes both by seq', async () => {
    const list = await plan('value:branch=feature-1');
    expect(list).toMatch(/SEARCH c USING COVERING INDEX build_custom_values_search_idx \(name=\? AND value=\?\)/);
    expect(list).toMatch(/SEARCH r USING COVERING INDEX build_custom_values_recent_search \(name=\? AND value=\?\)/);
    // Under NOT, each build probes both tables by its seq: never a scan per build.
    const probe = await plan('not value:branch=feature-1 and tag:tag-7');
    expect(probe).toMatch(/SEARCH c USING COVERING INDEX build_custom_values_search_idx \(name=\? AND value=\? AND seq=\?\)/);
    expect(probe).toMatch(/SEARCH r USING COVERING INDEX build_custom_values_recent_search \(name=\? AND value=\? AND seq=\?\)/);
    expect(probe).not.toMatch(/SCAN (c|r)\b/);
  });
  it('the (value, seq) index is gone (search migration 0004)', () => {
    expect(db.handle.sqlite!.prepare("SELECT name FROM sqlite_master WHERE name = 'build_custom_values_value_idx'").all()).toEqual([]);
  });
});

describe.skipIf(!pgAvailable())('PostgreSQL plans', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('postgres');
    await insertBuilds(db.handle, corpus(6000), { bulk: true });
    await sql`ANALYZE`.execute(db.handle.db);
  }, 300_000);
  afterAll(async () => db?.close());

  const plan = (q: string) => explainPlan(db.handle, parse(q));

  it('an exact match uses the column index', async () => {
    expect(await plan('user:alice-8')).toMatch(/Index Scan using builds_user_idx/);
  });
  it('a prefix pattern is an index range scan', async () => {
    expect(await plan('user:alice-1*')).toMatch(/Index Cond: \(\(?"?user"? ~>=~/);
  });
  /**
   * The plan with sequential scans forbidden: on tables this small a scan is cheaper, so this
   * shows which indexes the compiled query can use (at scale the planner picks them on its own:
   * bench/search.ts).
   */
  const indexPlan = async (q: string): Promise<string> => {
    const { sql: text, parameters } = explainSql(parse(q), 'postgres');
    const client = await db.handle.pool!.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const r = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, parameters as unknown[]);
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  };
  it('an infix pattern with >= 3 characters can use the pg_trgm index', async () => {
    expect(await indexPlan('hostname:*st-96.exa*')).toMatch(/Bitmap Index Scan on builds_hostname_trgm/);
  });
  it('an infix pattern on a multi-valued field matches the distinct terms, then reads the child rows by exact value', async () => {
    // The terms by primary key or trigram GIN index, whichever the planner prefers for their number.
    const shown = await indexPlan('requested:*sk-1*');
    expect(shown).toMatch(/on build_value_terms t/);
    // The field by its code (store migration 0016).
    expect(shown).toMatch(new RegExp(`Index Cond: \\(\\(field = ${valueFieldCode('requested')}\\) AND \\(value = t\\.value\\)\\)`));
  });
  it('a page of such a pattern walks builds in seq order against a hashed list, not a join of every match', async () => {
    const { sql: text, parameters } = explainSql(parse('requested:*sk-1*'), 'postgres');
    const r = await db.handle.pool!.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text} ORDER BY builds.seq LIMIT 100`, parameters as unknown[]);
    const shown = r.rows.map((x) => x['QUERY PLAN']).join('\n');
    expect(shown).toMatch(/hashed SubPlan/);
    expect(shown).not.toMatch(/Semi Join|HashAggregate/);
  });
  it('a value under any name walks the distinct names of (name, value, seq) and seeks the value under each', async () => {
    for (const q of ['value:*=feature-1', 'value:*=feature-1*', 'value:*anc*=feature-1', 'value:br*=feature-1']) {
      // Run (ANALYZE): only then does the plan show the recursive step's subplan. No seqscan switch:
      // the per-name seek (a LATERAL subquery) is fixed by the SQL.
      const { sql: text, parameters } = explainSql(parse(q), 'postgres');
      const r = await db.handle.pool!.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) ${text} ORDER BY builds.seq LIMIT 100`, parameters as unknown[]);
      const p = r.rows.map((x) => x['QUERY PLAN']).join('\n');
      expect(p, q).toMatch(/Recursive Union/);
      // Each step: the next name after the previous one, in the index's own (byte) order.
      expect(p, q).toMatch(/SubPlan 1\s+->  Limit[\s\S]*Index Only Scan using build_custom_values_search_idx on public\.build_custom_values w\s[\s\S]*Index Cond: \(\(?w\.name ~>~ names(_\d)?\.name\)/);
      // Per name: a seek of (name, value).
      expect(p, q).toMatch(/Index Cond: \(\(c\.name = names\.name\) AND \(c\.value (=|~>=~) /);
      expect(p, q).not.toMatch(/Seq Scan on build_custom_values|build_custom_values_value_idx|build_custom_values_value_trgm/);
    }
  });
  it('a time range uses the column index', async () => {
    expect(await plan('buildStartTime:[2024-01-01T01:00 to 2024-01-01T02:00]')).toMatch(/Index Scan using builds_buildstarttime_idx/);
  });
  it('a tag uses the covering index of the child rows', async () => {
    expect(await plan('tag:tag-7')).toMatch(/build_values_search_idx/);
  });
  it('a negated tag on a page is one index seek per build visited, not a hash of every build with the tag', async () => {
    const { sql: text, parameters } = explainSql(parse('-tag:tag-7 -user:alice-1'), 'postgres');
    const r = await db.handle.pool!.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text} ORDER BY builds.seq LIMIT 100`, parameters as unknown[]);
    const shown = r.rows.map((x) => x['QUERY PLAN']).join('\n');
    expect(shown).not.toMatch(/hashed SubPlan/);
    expect(shown).toMatch(/Index Only Scan using build_values_search_idx/);
    expect(shown).toMatch(/Index Cond: .*seq = builds\.seq/);
  });
});
