// Laws of ingest by a publisher restricted to projects (fast-check over planBatch, which decides
// every line against the stored state; no database needed): whatever lines she sends,
//   1. nothing of a build she may not see is written;
//   2. every build written is, afterwards, in a project she may see;
//   3. the answers are the same as if each invisible build's ID did not exist at all.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planBatch, type StoredBuild } from '../../src/store/ingest/plan.js';
import { eventsJsonOf, prepareLine, type PreparedLine } from '../../src/store/ingest/prepare.js';
import type { Visibility } from '../../src/store/types.js';
import { projectVisible } from '../../src/store/search/visibility.js';

const STORED_IDS = ['s00000000000a', 's00000000000b', 's00000000000c', 's00000000000d'];
const UNKNOWN_IDS = ['u00000000000a', 'u00000000000b'];
const PROJECTS = ['billing', 'payments', null] as const;

interface Spec {
  readonly id: string | undefined;
  /** undefined: no ProjectStructure event; null: one without a name. */
  readonly project: string | null | undefined;
  readonly finished: boolean;
  readonly toolVersion: string;
  readonly tag: string;
}

function text(s: Spec): string {
  const ev = (t: number, eventType: string, data: Record<string, unknown>) => ({ timestamp: 1_700_000_000_000 + t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  const events = [
    ev(0, 'BuildStarted', {}),
    ...(s.project !== undefined ? [ev(1, 'ProjectStructure', s.project === null ? {} : { rootProjectName: s.project })] : []),
    ev(2, 'UserTag', { tag: s.tag }),
    ...(s.finished ? [ev(60_000, 'BuildFinished', { outcome: 'succeeded', failures: [] })] : []),
  ];
  return JSON.stringify({ ...(s.id !== undefined ? { buildId: s.id } : {}), toolType: 'native', toolVersion: s.toolVersion, agentVersion: '1', events });
}

function stored(id: string, project: string | null, finished: boolean, seq: number): StoredBuild {
  const p = prepareLine(text({ id, project, finished, toolVersion: '1', tag: 'stored' }));
  if (!p.ok) throw new Error(p.error);
  return {
    id,
    toolType: p.toolType,
    toolVersion: p.toolVersion,
    agentVersion: p.agentVersion,
    seq: finished ? seq : null,
    eventsKey: seq,
    contentHash: p.hash,
    chunkHashes: [p.hash],
    chunkEvents: [eventsJsonOf(p)],
    receivedAt: 1,
    project,
  };
}

const spec = fc.record({
  id: fc.constantFrom<string | undefined>(undefined, ...STORED_IDS, ...UNKNOWN_IDS),
  project: fc.constantFrom<string | null | undefined>(undefined, null, 'billing', 'payments'),
  finished: fc.boolean(),
  toolVersion: fc.constantFrom('1', '2'),
  tag: fc.constantFrom('stored', 'a', 'b'),
});

const visibility = fc.record({
  projects: fc.subarray(['billing', 'payments']),
  withoutProject: fc.boolean(),
});

function plan(lines: readonly string[], builds: ReadonlyMap<string, StoredBuild>, v: Visibility) {
  let n = 0;
  const prepared: PreparedLine[] = lines.map((t, i) => ({ line: i + 1, prepared: prepareLine(t) }));
  return planBatch(prepared, { load: (id) => builds.get(id), now: () => 5, newId: () => `n${String(n++).padStart(12, '0')}`, maxSeq: 10, lastEventsKey: 10, visibility: v });
}

describe('restricted ingest laws', () => {
  it('writes nothing of invisible builds, leaves every written build visible, and answers as for unknown IDs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...PROJECTS), fc.boolean()), { minLength: STORED_IDS.length, maxLength: STORED_IDS.length }),
        fc.array(spec, { minLength: 1, maxLength: 8 }),
        visibility,
        (storedSpecs, specs, v) => {
          const builds = new Map(storedSpecs.map(([project, finished], i) => [STORED_IDS[i]!, stored(STORED_IDS[i]!, project, finished, i + 1)] as const));
          const invisible = STORED_IDS.filter((id) => !projectVisible(v, builds.get(id)!.project));
          const { results, writes } = plan(specs.map(text), builds, v);

          // 1. Nothing of an invisible build is written.
          for (const row of [...writes.insertBuilds, ...writes.updateBuilds]) expect(invisible).not.toContain(row[0]);
          const invisibleKeys = invisible.map((id) => builds.get(id)!.eventsKey);
          for (const c of writes.chunks) expect(invisibleKeys).not.toContain(c.events_key);
          // 2. Every build written ends in a project she may see.
          for (const row of [...writes.insertBuilds, ...writes.updateBuilds]) expect(projectVisible(v, row[6] as string | null)).toBe(true);
          // 3. The same lines with each invisible ID replaced by one that does not exist get the
          //    same answers (IDs mapped back) and the same writes.
          const fresh = new Map<string, string>(invisible.map((id, i) => [id, `f${String(i).padStart(12, '0')}`]));
          const back = new Map<string, string>([...fresh].map(([a, b]) => [b, a]));
          const renamed = plan(specs.map((s) => text({ ...s, id: s.id !== undefined ? (fresh.get(s.id) ?? s.id) : undefined })), builds, v);
          const mapBack = (x: unknown) => JSON.parse(JSON.stringify(x).replace(/f0{0,11}\d+/g, (m) => back.get(m) ?? m)) as unknown;
          expect(mapBack(renamed.results)).toEqual(results);
          expect(mapBack(renamed.writes)).toEqual(JSON.parse(JSON.stringify(writes)));
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it('refuses every line that names an ID: she may append to her builds only, and names no new ID', () => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 6 }), visibility, (specs, v) => {
        const builds = new Map<string, StoredBuild>();
        const { results } = plan(specs.map(text), builds, v);
        results.forEach((r, i) => {
          if (specs[i]!.id !== undefined) expect(r).toMatchObject({ status: 'rejected', path: '$.buildId' });
        });
      }),
      { numRuns: 100 },
    );
  });
});
