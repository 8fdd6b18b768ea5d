// Posting lists (src/store/search/postings.ts): the leapfrog intersection against a naive one, and pages
// listed through the lists equal to the same pages listed by SQL alone, for conjunctions of exact
// terms drawn from the builds' own values, with every listing option; new builds extend the lists.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckedExpr } from '../../src/query/checked.js';
import { parseQuery } from '../../src/query/index.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { exactTermsOf, SPAN } from './exact-terms.js';
import { PostingCache, intersect, setSeqBits } from '../../src/store/search/postings.js';
import { SEE_EVERYTHING, type BuildStore, type BuildWithAttributes, type ListBuildsOptions, type Visibility } from '../../src/store/types.js';
import { dataQueries } from '../sql/support/data-queries.js';

const NOW = Date.UTC(2026, 0, 15);

describe('intersect', () => {
  const sortedSet = fc.uniqueArray(fc.integer({ min: 1, max: 300 }), { maxLength: 120 }).map((a) => Int32Array.from(a.sort((x, y) => x - y)));
  it('yields the seqs in every list, in order from the first one asked for', () => {
    fc.assert(
      fc.property(fc.array(sortedSet, { minLength: 1, maxLength: 4 }), fc.oneof(fc.integer({ min: 0, max: 330 }), fc.constant(0x7fffffff)), fc.boolean(), (arrays, first, reverse) => {
        const lists = arrays.map((seqs) => {
          const words = new Uint32Array(Math.ceil(((seqs.at(-1) ?? 0) + 1) / 32) + (seqs.length % 3));
          for (const seq of seqs) words[seq >>> 5] = words[seq >>> 5]! | (1 << (seq & 31));
          return { words };
        });
        const want = [...arrays[0]!].filter((s) => arrays.every((a) => a.includes(s)) && (reverse ? s <= first : s >= first));
        if (reverse) want.reverse();
        expect([...intersect(lists, first, reverse)]).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });
});

describe("a term's seqs as text (SQLite's group_concat)", () => {
  it('set the bits of exactly those seqs, repeats and any order included', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(70_000), { maxLength: 300 }), (seqs) => {
        const words = new Uint32Array((70_000 >>> 5) + 1);
        setSeqBits(words, seqs.length === 0 ? undefined : seqs.join(','));
        const expected = new Uint32Array(words.length);
        for (const s of seqs) expected[s >>> 5] = expected[s >>> 5]! | (1 << (s & 31));
        expect(words).toEqual(expected);
      }),
    );
    expect(() => setSeqBits(new Uint32Array(1), '1,x')).toThrow(/hold "x"/);
  });
});

describe('pages through posting lists (SQLite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let fast: BuildStore;
  let plain: BuildStore;
  let builds: BuildWithAttributes[];
  let projects: string[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'postings-'));
    handle = await openDatabase({ data: dir });
    let tick = NOW;
    // A clock that moves, so that builds become available at different instants (fromInstant).
    // Without the analytics index: a listing takes the index's matches when it has them, and the
    // posting lists where it has none (or while it reads the builds).
    fast = await openBuildStore(handle, { clock: () => tick++, analyticsIndex: false });
    plain = await openBuildStore(handle, { clock: () => NOW, postings: false, analyticsIndex: false });
    await fast.ingestNdjson([...demoBuilds({ builds: 300, seed: 11, now: NOW })].join('\n'));
    builds = (await plain.listBuilds({ visibility: SEE_EVERYTHING, withAttributes: true })) as BuildWithAttributes[];
    projects = [...new Set(builds.map((b) => b.attributes['project']).filter((p): p is string => typeof p === 'string'))];
  }, 120_000);
  afterAll(async () => {
    await fast?.close();
    await plain?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = async (s: BuildStore, o: ListBuildsOptions) => (await s.listBuilds(o)).map((b) => b.id);

  it("reads a term's builds for its bitmap as a search, not in the server's thread", async () => {
    // A first read of a term is every build it matches (556k for tag:CI at 1M builds): prepared
    // on the server's connection it ran there, and every other request waited for it.
    const prepared = vi.spyOn(handle.sqlite!, 'prepare');
    const used = vi.spyOn(PostingCache.prototype, 'postings');
    const q = parseQuery(`project:${projects[0]} tag:nightly-${Date.now()}`, { now: NOW });
    await fast.listBuilds({ query: q.expr!, visibility: SEE_EVERYTHING, maxBuilds: 5 });
    expect(used).toHaveBeenCalled();
    // A term's seqs as one text, through builds or a child-row term's rows alone (`tag:`, sql/compile.ts childListSeqs).
    const inThread = prepared.mock.calls.map(([sql]) => String(sql)).filter((sql) => /^SELECT group_concat\(seq\) AS seqs FROM /.test(sql));
    prepared.mockRestore();
    used.mockRestore();
    expect(inThread).toEqual([]);
  });

  it('list exactly what SQL lists, for every option', async () => {
    const used = vi.spyOn(PostingCache.prototype, 'postings');
    const query = fc
      .tuple(fc.nat(), fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), fc.option(dataQueries(builds), { nil: undefined }))
      .map(([b, picks, rest]): CheckedExpr => {
        const terms = exactTermsOf(builds[b % builds.length]!);
        const chosen = picks.map((p) => terms[p % terms.length]!);
        const operands = rest === undefined ? chosen : [...chosen, rest];
        return operands.length === 1 ? operands[0]! : { kind: 'and', operands, span: SPAN };
      });
    const visibility = fc.oneof(
      fc.constant<Visibility>(SEE_EVERYTHING),
      fc.record({ projects: fc.subarray(projects), withoutProject: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(
        query,
        visibility,
        fc.integer({ min: 0, max: 25 }),
        fc.boolean(),
        fc.option(fc.nat(), { nil: undefined }),
        fc.option(fc.nat(), { nil: undefined }),
        async (q, vis, maxBuilds, reverse, from, instant) => {
          const options: ListBuildsOptions = {
            query: q,
            visibility: vis,
            maxBuilds,
            reverse,
            ...(from !== undefined ? { afterSeq: from % (builds.length + 10) } : {}),
            ...(instant !== undefined ? { fromInstant: builds[instant % builds.length]!.availableAt + (instant % 3) - 1 } : {}),
          };
          expect(await ids(fast, options)).toEqual(await ids(plain, options));
        },
      ),
      { numRuns: 400 },
    );
    // The property exercised the lists, not only the SQL fallback.
    expect(used.mock.results.filter((r) => r.value !== undefined).length).toBeGreaterThan(100);
    used.mockRestore();
  }, 120_000);

  it('page from a build with fromBuild, both directions', async () => {
    const q = parseQuery('buildOutcome:succeeded tag:ci', { now: NOW }).expr!;
    for (const reverse of [false, true]) {
      for (const b of builds.filter((_, i) => i % 37 === 0)) {
        const o: ListBuildsOptions = { query: q, visibility: SEE_EVERYTHING, maxBuilds: 7, reverse, fromBuild: b.id };
        expect(await ids(fast, o)).toEqual(await ids(plain, o));
      }
    }
  });

  it('read the page\'s builds from the index that covers the listing\'s columns', async () => {
    const prepare = vi.spyOn(handle.sqlite!, 'prepare');
    const q = parseQuery('tag:ci buildOutcome:succeeded user:*', { now: NOW }).expr!;
    // A page size of its own, so that the statement is prepared here and not taken from the cache.
    await fast.listBuilds({ query: q, visibility: SEE_EVERYTHING, maxBuilds: 17 });
    const page = prepare.mock.calls.map((c) => c[0]).find((text) => text.includes('INDEXED BY'));
    prepare.mockRestore();
    expect(page).toBeDefined();
    const plan = (handle.sqlite!.prepare(`EXPLAIN QUERY PLAN ${page}`).all(...Array.from({ length: (page!.match(/\?/g) ?? []).length }, () => 1)) as { detail: string }[]).map((r) => r.detail).join('\n');
    expect(plan).toMatch(/SEARCH builds USING (COVERING )?INDEX builds_listing \(seq=\?\)/);
  });

  it('see builds that became available after the lists were read', async () => {
    const q = parseQuery('tag:ci buildOutcome:failed', { now: NOW }).expr!;
    const page = { query: q, visibility: SEE_EVERYTHING, maxBuilds: 5, reverse: true } as const;
    const before = await ids(fast, page);
    expect(before).toEqual(await ids(plain, page));
    const more = [...demoBuilds({ builds: 60, seed: 12, now: NOW })].map((l) => l.replace(/"buildId":"([0-9a-z]{13})"/, (_, id: string) => `"buildId":"${id.slice(0, 12)}z"`));
    await plain.ingestNdjson(more.join('\n'));
    const after = await ids(fast, page);
    expect(after).toEqual(await ids(plain, page));
    expect(after).not.toEqual(before);
  });
});
