// Deleting builds (store/prune.ts) on both databases: a deleted build leaves every listing, search,
// count and per-build table at once, is remembered as deleted (for callers who could see it), its
// seq is never handed out again, and listings resume after it.

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { SEE_EVERYTHING, type Visibility } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { ev, id, line, useTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

/** A complete build of `project` that started at `start`, with a tag and a custom value (child rows). */
function buildAt(buildId: string, start: number, project: string): string {
  return line({
    buildId,
    events: [
      ev('BuildStarted', {}, start),
      ev('ProjectStructure', { rootProjectName: project }, start + 1),
      ev('UserTag', { tag: 'nightly' }, start + 2),
      ev('UserNamedValue', { key: 'branch', value: `main-${project}` }, start + 3),
      ev('BuildFinished', { outcome: 'succeeded', failures: [] }, start + 10),
    ],
  });
}

const q = (text: string) => parseQuery(text, { now: T0 }).expr!;

describe.each(dialects)('deleting builds on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  /** Builds that started 40, 30, 20 and 10 days before T0 (alpha, beta, alpha, beta). */
  async function four(): Promise<string[]> {
    const ids = [id(), id(), id(), id()];
    const results = await t.store.ingestNdjson([40, 30, 20, 10].map((d, i) => buildAt(ids[i]!, T0 - d * DAY, i % 2 === 0 ? 'alpha' : 'beta')).join('\n'));
    expect(results.map((r) => r.status)).toEqual(['stored', 'stored', 'stored', 'stored']);
    return ids;
  }

  const listed = async (o: { query?: string; visibility?: Visibility } = {}) =>
    (await t.store.listBuilds({ visibility: o.visibility ?? SEE_EVERYTHING, ...(o.query ? { query: q(o.query) } : {}) })).map((b) => b.id);

  const eventsKeys = new Map<string, number>();
  async function rowsOf(seqs: readonly number[], ids: readonly string[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ['build_values', 'build_values_recent', 'build_custom_values', 'build_custom_values_recent', 'build_attributes', 'build_attestations'] as const) {
      const r = await t.handle.db.selectFrom(table).select(sql<number>`count(*)`.as('n')).where('seq', 'in', seqs).executeTakeFirstOrThrow();
      out[table] = Number(r.n);
    }
    // Custom values and values are in either of their tables (on SQLite the latest ones are
    // gathered apart, store/ingest/recent-rows.ts): counted together.
    for (const table of ['build_values', 'build_custom_values'] as const) {
      out[table] = out[table]! + out[`${table}_recent`]!;
      delete out[`${table}_recent`];
    }
    // The events are keyed by the builds' events_key (store migration 0014), remembered while the builds exist.
    for (const r of await t.handle.db.selectFrom('builds').select(['id', 'events_key']).where('id', 'in', ids).execute()) eventsKeys.set(r.id, Number(r.events_key));
    const keys = ids.map((id) => eventsKeys.get(id)!);
    expect(keys.every((k) => Number.isInteger(k))).toBe(true);
    const e = await t.handle.db.selectFrom('build_events').select(sql<number>`count(*)`.as('n')).where('events_key', 'in', keys).executeTakeFirstOrThrow();
    out['build_events'] = Number(e.n);
    return out;
  }

  it('deletes the builds that started before an instant, from every table, listing and search at once', async () => {
    const ids = await four();
    const before = await t.store.listBuilds({ visibility: SEE_EVERYTHING });
    const oldSeqs = before.slice(0, 2).map((b) => b.seq);
    // An attestation made from each build, as the provenance service notes it for the build's page.
    for (const [i, b] of ids.entries()) {
      await t.store.recordAttestation(b, { attestationUri: `/packages/oci/app/${i}/sha256:${'a'.repeat(64)}/attestations/obj:main/x${i}`, packageUrl: 'pkg:oci/app', digest: `sha256:${'a'.repeat(64)}`, predicateType: 'https://slsa.dev/provenance/v1', store: 'obj:main', publishedAt: T0 });
    }
    expect(Object.values(await rowsOf(oldSeqs, ids.slice(0, 2))).every((n) => n > 0)).toBe(true);

    const gone = await t.store.deleteBuilds({ kind: 'startedBefore', instant: T0 - 25 * DAY }, 200);
    expect(gone.map((g) => g.id).sort()).toEqual(ids.slice(0, 2).sort());
    expect(await listed()).toEqual(ids.slice(2));
    expect(await listed({ query: 'project:alpha' })).toEqual([ids[2]]);
    // Child-row searches (multi-valued tag, custom value) and an infix search (trigram tables).
    expect(await listed({ query: 'tag:nightly' })).toEqual(ids.slice(2));
    expect(await listed({ query: 'value:branch=main-beta' })).toEqual([ids[3]]);
    expect(await listed({ query: 'project:*lph*' })).toEqual([ids[2]]);
    expect(await rowsOf(oldSeqs, ids.slice(0, 2))).toEqual({ build_values: 0, build_custom_values: 0, build_attributes: 0, build_attestations: 0, build_events: 0 });
    expect((await t.store.attestationsOf(ids[2]!)).map((a) => a.attestationUri)).toEqual([`/packages/oci/app/2/sha256:${'a'.repeat(64)}/attestations/obj:main/x2`]);
    for (const i of [0, 1]) expect(await t.store.getBuild(ids[i]!, SEE_EVERYTHING)).toBeUndefined();
    const streamed: string[] = [];
    for await (const b of t.store.streamBuilds({ visibility: SEE_EVERYTHING })) streamed.push(b.id);
    expect(streamed).toEqual(ids.slice(2));
    if (t.handle.sqlite) {
      // The external-content trigram tables still match their content.
      expect(() => t.handle.sqlite!.exec("INSERT INTO builds_trigram(builds_trigram) VALUES ('integrity-check')")).not.toThrow();
      expect(() => t.handle.sqlite!.exec("INSERT INTO build_custom_values_trigram(build_custom_values_trigram) VALUES ('integrity-check')")).not.toThrow();
    }
    // Nothing left of that age: a second run deletes nothing.
    expect(await t.store.deleteBuilds({ kind: 'startedBefore', instant: T0 - 25 * DAY }, 200)).toEqual([]);
  });

  it('deletes in batches of the given size, oldest first', async () => {
    const ids = await four();
    expect((await t.store.deleteBuilds({ kind: 'oldest' }, 3)).map((g) => g.id)).toEqual(ids.slice(0, 3));
    expect(await listed()).toEqual([ids[3]]);
  });

  it('remembers a deleted build for callers who could see it', async () => {
    const ids = await four();
    await t.store.deleteBuilds({ kind: 'oldest' }, 2);
    const d = await t.store.deletedBuild(ids[1]!, SEE_EVERYTHING);
    expect(d).toMatchObject({ project: 'beta', deletedAt: t.now.value });
    expect(await t.store.deletedBuild(ids[1]!, { projects: ['beta'], withoutProject: false })).toBeDefined();
    expect(await t.store.deletedBuild(ids[1]!, { projects: ['alpha'], withoutProject: true })).toBeUndefined();
    expect(await t.store.deletedBuild(ids[2]!, SEE_EVERYTHING)).toBeUndefined();
    expect(await t.store.deletedBuild('never-stored', SEE_EVERYTHING)).toBeUndefined();
  });

  it('never hands out a deleted seq again, and a listing from a deleted build goes on with the next one', async () => {
    const ids = await four();
    const seqs = (await t.store.listBuilds({ visibility: SEE_EVERYTHING })).map((b) => b.seq);
    // Delete the newest build: the next build must not take its seq.
    const newest = await t.store.deleteBuilds({ kind: 'startedBefore', instant: T0 }, 200);
    expect(newest).toHaveLength(4);
    const next = id();
    await t.store.ingestNdjson(buildAt(next, T0 + DAY, 'alpha'));
    const [b] = await t.store.listBuilds({ visibility: SEE_EVERYTHING });
    expect(b!.id).toBe(next);
    expect(b!.seq).toBeGreaterThan(Math.max(...seqs));
    // From a deleted build: the builds after its place.
    expect((await t.store.listBuilds({ visibility: SEE_EVERYTHING, fromBuild: ids[1]! })).map((x) => x.id)).toEqual([next]);
    expect((await t.store.listBuilds({ visibility: SEE_EVERYTHING, fromBuild: ids[3]!, reverse: true })).map((x) => x.id)).toEqual([]);
    await expect(t.store.listBuilds({ visibility: { projects: ['alpha'], withoutProject: false }, fromBuild: ids[1]! })).rejects.toThrow(/Unknown build/);
  });

  it('deletes incomplete builds by when they were received', async () => {
    const open = id();
    t.now.value = T0 - 50 * DAY;
    await t.store.ingestNdjson(line({ buildId: open, events: [ev('BuildStarted', {}, T0 - 50 * DAY)] }));
    t.now.value = T0;
    const fresh = id();
    await t.store.ingestNdjson(line({ buildId: fresh, events: [ev('BuildStarted', {}, T0)] }));
    expect(await t.store.buildState(open, SEE_EVERYTHING)).toBe('incomplete');
    const gone = await t.store.deleteBuilds({ kind: 'startedBefore', instant: T0 - DAY }, 200);
    expect(gone).toEqual([{ id: open, seq: null, project: null }]);
    expect(await t.store.buildState(open, SEE_EVERYTHING)).toBe('missing');
    expect(await t.store.buildState(fresh, SEE_EVERYTHING)).toBe('incomplete');
  });
});
