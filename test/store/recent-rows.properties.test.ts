// Child rows gathered in arrival order and moved into their indexed tables in bulk
// (store/ingest/recent-rows.ts): with ingests, moves, deletions and searches interleaved at random, every
// search of custom values or IP addresses lists exactly the stored builds whose own values match,
// whichever table holds them, and a build is found by them as soon as it is stored.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { parseQuery } from '../../src/query/index.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoPool } from './demo-pool.js';
import { SEE_EVERYTHING, type BuildStore } from '../../src/store/types.js';
import { SPREAD_VALUE_FIELDS } from '../../src/sql/value-fields.js';

const NOW = Date.UTC(2026, 0, 15);
/** Small, so that moves happen every few dozen builds and both tables hold rows most of the time. */
const FOLD_ROWS = 60;
/** The tools with an `environment.localIPAddress` field (a spread field, sql/value-fields.ts). */
const IP_TOOLS = ['native', 'jvmbuild', 'scalabuild'];

type Pair = readonly [name: string, value: string];

type Query =
  | { readonly kind: 'exact'; readonly build: number; readonly pick: number; readonly negated: boolean }
  | { readonly kind: 'prefixes'; readonly build: number; readonly pick: number; readonly nameChars: number; readonly valueChars: number }
  | { readonly kind: 'infix'; readonly build: number; readonly pick: number; readonly from: number }
  | { readonly kind: 'name'; readonly build: number; readonly pick: number; readonly negated: boolean }
  | { readonly kind: 'ip'; readonly build: number; readonly chars: number; readonly shape: 'exact' | 'prefix' | 'infix'; readonly negated: boolean };

type Op =
  | { readonly kind: 'ingest'; readonly n: number }
  | { readonly kind: 'deleteOldest'; readonly n: number }
  | { readonly kind: 'search'; readonly query: Query };

/** A wildcard pattern (`*` any run) matched as a whole, as the search language does. */
const matches = (pattern: string, text: string): boolean =>
  new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's').test(text);

const quoted = (s: string): string => `"${s}"`;

describe('recent custom values with moves and deletions interleaved (SQLite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let store: BuildStore;
  /** Each build's custom values, lower-cased, as its events name them. */
  const pairs = new Map<string, Pair[]>();
  /** Each build's tool and IP addresses, as its events name them. */
  const machines = new Map<string, { tool: string; ips: string[] }>();
  const next = demoPool({ seed: 41, now: NOW, prefix: 'r' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'recent-custom-'));
    handle = await openDatabase({ data: dir });
    store = await openBuildStore(handle, { clock: () => NOW, foldRows: FOLD_ROWS, postings: false });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The next `n` builds, their custom values noted. */
  function take(n: number): string[] {
    const lines = next(n);
    for (const line of lines) {
      const parsed = JSON.parse(line) as { buildId: string; toolType: string; events: { type: { eventType: string }; data: { key?: string; value?: string; localIpAddresses?: string[] } }[] };
      const ips = parsed.events.filter((e) => e.type.eventType === 'BuildAgent').flatMap((e) => e.data.localIpAddresses ?? []);
      machines.set(parsed.buildId, { tool: parsed.toolType, ips: ips.map((ip) => ip.toLowerCase()) });
      const own = parsed.events
        .filter((e) => e.type.eventType === 'UserNamedValue' && typeof e.data.key === 'string' && typeof e.data.value === 'string')
        .map((e) => [e.data.key!.toLowerCase(), e.data.value!.toLowerCase()] as const);
      pairs.set(parsed.buildId, own);
    }
    return lines;
  }

  const storedIds = async (): Promise<string[]> => {
    const out: string[] = [];
    for await (const b of store.streamBuilds({ visibility: SEE_EVERYTHING })) out.push(b.id);
    return out;
  };
  const listed = async (text: string): Promise<string[]> => {
    const parsed = parseQuery(text, { now: NOW });
    if (parsed.expr === undefined) throw new Error(`the test's query does not parse: ${text}`);
    const out: string[] = [];
    for await (const b of store.streamBuilds({ visibility: SEE_EVERYTHING, query: parsed.expr })) out.push(b.id);
    return out.sort();
  };
  const rowsIn = (table: string): number => Number(handle.sqlite!.prepare(`SELECT count(*) FROM ${table}`).pluck().get());

  /** The query's text and which builds match it. */
  function query(q: Query, ids: readonly string[]): { text: string; match: (id: string) => boolean } {
    if (q.kind === 'ip') {
      // One of the addresses of a stored build of a tool that has the field.
      const withIps = ids.filter((id) => IP_TOOLS.includes(machines.get(id)!.tool) && machines.get(id)!.ips.length > 0);
      const { tool, ips } = machines.get(withIps[q.build % withIps.length] ?? ids[0]!)!;
      const ip = ips[q.build % Math.max(1, ips.length)] ?? '10.0.0.1';
      const from = q.chars % Math.max(1, ip.length - 2);
      const pattern = q.shape === 'exact' ? ip : q.shape === 'prefix' ? `${ip.slice(0, 1 + (q.chars % ip.length))}*` : `*${ip.slice(from, from + 3)}*`;
      const hit = (id: string) => machines.get(id)!.tool === tool && machines.get(id)!.ips.some((v) => matches(pattern, v));
      const text = `${tool}.environment.localIPAddress:${quoted(pattern)}`;
      return q.negated ? { text: `not ${text}`, match: (id) => !hit(id) } : { text, match: hit };
    }
    const custom = customQuery(q, ids);
    return { text: custom.text, match: (id) => custom.match(pairs.get(id)!) };
  }

  /** A custom-value query's text and which of its own custom values a build needs to match it. */
  function customQuery(q: Exclude<Query, { kind: 'ip' }>, ids: readonly string[]): { text: string; match: (own: readonly Pair[]) => boolean } {
    const own = pairs.get(ids[q.build % ids.length]!)!;
    const [name, value] = own[q.pick % own.length]!;
    switch (q.kind) {
      case 'exact': {
        const hit = (p: readonly Pair[]) => p.some(([n, v]) => n === name && v === value);
        return q.negated ? { text: `not value:${quoted(`${name}=${value}`)}`, match: (p) => !hit(p) } : { text: `value:${quoted(`${name}=${value}`)}`, match: hit };
      }
      case 'prefixes': {
        // A name pattern walks the distinct names (sql/compile.ts byCustomNames).
        const n = `${name.slice(0, 1 + (q.nameChars % name.length))}*`;
        const v = `${value.slice(0, q.valueChars % (value.length + 1))}*`;
        return { text: `value:${quoted(`${n}=${v}`)}`, match: (p) => p.some(([pn, pv]) => matches(n, pn) && matches(v, pv)) };
      }
      case 'infix': {
        // Three characters or more: the indexed rows' trigram table gives the candidates.
        const from = q.from % Math.max(1, value.length - 2);
        const v = `*${value.slice(from, from + 3)}*`;
        return { text: `value:${quoted(`*=${v}`)}`, match: (p) => p.some(([, pv]) => matches(v, pv)) };
      }
      case 'name': {
        const hit = (p: readonly Pair[]) => p.some(([n]) => n === name);
        return q.negated ? { text: `not value:${quoted(name)}`, match: (p) => !hit(p) } : { text: `value:${quoted(name)}`, match: hit };
      }
    }
  }

  const pick = { build: fc.nat(), pick: fc.nat() };
  const queryArb: fc.Arbitrary<Query> = fc.oneof(
    fc.record({ kind: fc.constant('exact' as const), ...pick, negated: fc.boolean() }),
    fc.record({ kind: fc.constant('prefixes' as const), ...pick, nameChars: fc.nat(), valueChars: fc.nat() }),
    fc.record({ kind: fc.constant('infix' as const), ...pick, from: fc.nat() }),
    fc.record({ kind: fc.constant('name' as const), ...pick, negated: fc.boolean() }),
    fc.record({ kind: fc.constant('ip' as const), build: fc.nat(), chars: fc.nat(), shape: fc.constantFrom('exact' as const, 'prefix' as const, 'infix' as const), negated: fc.boolean() }),
  );
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('ingest' as const), n: fc.integer({ min: 1, max: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteOldest' as const), n: fc.integer({ min: 1, max: 30 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('search' as const), query: queryArb }) },
  );

  it('lists exactly the builds whose custom values or IP addresses match, in either table, from the moment they are stored', async () => {
    let searches = 0;
    let bothHeld = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          switch (o.kind) {
            case 'ingest': {
              const lines = take(o.n);
              await store.ingestNdjson(lines.join('\n'));
              // Found at once by its commit ID and its IP address, whichever table holds them now.
              const last = JSON.parse(lines.at(-1)!) as { buildId: string };
              const commit = pairs.get(last.buildId)!.find(([n]) => n === 'git commit id')!;
              expect(await listed(`value:${quoted(`git commit id=${commit[1]}`)}`)).toContain(last.buildId);
              const { tool, ips } = machines.get(last.buildId)!;
              if (IP_TOOLS.includes(tool) && ips.length > 0) {
                expect(await listed(`${tool}.environment.localIPAddress:${quoted(ips[0]!)}`)).toContain(last.buildId);
                // Offered for completion with every stored build that has it, in either table.
                const having = (await storedIds()).filter((id) => machines.get(id)!.tool === tool && machines.get(id)!.ips.includes(ips[0]!)).length;
                const offered = await store.fieldValues(`${tool}.environment.localIPAddress`, { visibility: SEE_EVERYTHING, prefix: ips[0]!, limit: 50 });
                expect(offered.find((v) => v.value === ips[0])?.count).toBe(having);
              }
              break;
            }
            case 'deleteOldest':
              await store.deleteBuilds({ kind: 'oldest' }, o.n);
              break;
            case 'search': {
              const ids = await storedIds();
              if (ids.length === 0) break;
              const { text, match } = query(o.query, ids);
              searches++;
              const [large, recent] = o.query.kind === 'ip' ? ['build_values', 'build_values_recent'] : ['build_custom_values', 'build_custom_values_recent'];
              if (rowsIn(large!) > 0 && rowsIn(recent!) > 0) bothHeld++;
              expect(await listed(text), text).toEqual(ids.filter(match).sort());
              break;
            }
          }
        }
      }),
      { numRuns: 40 },
    );
    // The property ran its searches while both tables held rows, not only one of them.
    expect(searches).toBeGreaterThan(30);
    expect(bothHeld).toBeGreaterThan(searches / 4);
  }, 300_000);

  it('moves the gathered rows into the indexed tables once there are enough, and keeps the others apart', async () => {
    const before = rowsIn('build_custom_values') + rowsIn('build_custom_values_recent');
    // The IP addresses, in build_values or gathered apart.
    const ipRows = (): number => rowsIn(`build_values WHERE field IN (${[...SPREAD_VALUE_FIELDS].join(', ')})`) + rowsIn('build_values_recent');
    const ipsBefore = ipRows();
    const lines = take(60);
    const ids = lines.map((l) => (JSON.parse(l) as { buildId: string }).buildId);
    const customs = ids.reduce((n, id) => n + pairs.get(id)!.length, 0);
    const ips = ids.reduce((n, id) => n + (IP_TOOLS.includes(machines.get(id)!.tool) ? new Set(machines.get(id)!.ips).size : 0), 0);
    // One part (the default batch): the custom values of 60 demo builds are well over FOLD_ROWS, so
    // the part's end moved every one of them; the IP addresses, fewer, wait unless they reached it.
    await store.ingestNdjson(lines.join('\n'));
    expect(customs).toBeGreaterThan(FOLD_ROWS);
    expect(rowsIn('build_custom_values_recent')).toBe(0);
    expect(rowsIn('build_custom_values')).toBe(before + customs);
    expect(ipRows()).toBe(ipsBefore + ips);
    expect(rowsIn('build_values_recent')).toBeLessThan(FOLD_ROWS);
    // Every moved row is in the trigram table (the ingest fills it for the rows the move added).
    expect(() => handle.sqlite!.exec("INSERT INTO build_custom_values_trigram(build_custom_values_trigram, rank) VALUES ('integrity-check', 1)")).not.toThrow();
  }, 60_000);
});
