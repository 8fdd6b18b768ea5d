// Ingest by a publisher restricted to projects (docs/store.md, "Publishers restricted to
// projects"), on SQLite and PostgreSQL: she appends only to builds she may see, never moves a
// build into or out of her sight, and a refusal says the same for an invisible build as for an
// ID that does not exist.

import { describe, expect, it } from 'vitest';
import { SEE_EVERYTHING, type IngestLineResult, type Visibility } from '../../src/store/types.js';
import { unusableBuildId } from '../../src/store/ingest/plan.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, ev, id, line, useTestStore } from './support.js';

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

const BILLING: Visibility = { projects: ['billing'], withoutProject: false };
const BILLING_AND_NONE: Visibility = { projects: ['billing'], withoutProject: true };

/** A result with the build ID replaced, to compare the answers for two IDs. */
function anonymised(r: IngestLineResult, buildId: string): unknown {
  return JSON.parse(JSON.stringify(r).split(buildId).join('<id>'));
}

describe.each(dialects)('restricted ingest on $name', ({ name, skip }) => {
  const t = useTestStore(name, skip);

  const ingest = async (text: string, visibility?: Visibility) => (await t.store.ingestNdjson(`${text}\n`, visibility ? { visibility } : {}))[0]!;
  const finishing = (buildId: string | undefined, project?: string) =>
    line({
      ...(buildId !== undefined ? { buildId } : {}),
      events: [...(project !== undefined ? [ev('ProjectStructure', { rootProjectName: project })] : []), ev('BuildFinished', { outcome: 'succeeded', failures: [] })],
    });

  it("cannot take over another project's unfinished build, and the answer equals that for an unknown ID", async () => {
    const theirs = id();
    const unknown = id();
    await ingest(line({ buildId: theirs, events: [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: 'payments' }), ev('UserNamedValue', { key: 'secret', value: 's3cr3t' })] }));
    const takeover = await ingest(finishing(theirs, 'billing'), BILLING);
    const fresh = await ingest(finishing(unknown, 'billing'), BILLING);
    expect(takeover).toEqual({ line: 1, status: 'rejected', buildId: theirs, path: '$.buildId', error: unusableBuildId(theirs) });
    expect(anonymised(takeover, theirs)).toEqual(anonymised(fresh, unknown));
    // Nothing changed: still incomplete, still the other project's, and the unknown ID not created.
    expect(await t.store.buildState(theirs, SEE_EVERYTHING)).toBe('incomplete');
    expect(await t.store.buildState(theirs, { projects: ['payments'], withoutProject: false })).toBe('incomplete');
    expect(await t.store.buildState(unknown, SEE_EVERYTHING)).toBe('missing');
    // Its owner can still finish it.
    expect(await ingest(finishing(theirs))).toMatchObject({ status: 'stored', complete: true });
    expect((await t.store.getBuild(theirs, SEE_EVERYTHING))?.project).toBe('payments');
  });

  it('says nothing of an invisible finished build: not unchanged, not its header, not its state', async () => {
    const theirs = id();
    const unknown = id();
    const stored = completeBuild(theirs, 'payments');
    await ingest(stored);
    const answers = [
      stored, // the same content: would be "unchanged"
      stored.replace('"toolVersion":"8.10.2"', '"toolVersion":"9.0"'), // would echo the stored toolVersion
      completeBuild(theirs, 'billing'), // other content: would say "already stored and finished"
    ].map(async (text) => {
      const invisible = await ingest(text, BILLING);
      const missing = await ingest(text.split(theirs).join(unknown), BILLING);
      expect(JSON.stringify(invisible)).not.toContain('8.10.2');
      expect(anonymised(invisible, theirs)).toEqual(anonymised(missing, unknown));
      return invisible.status;
    });
    expect(await Promise.all(answers)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await t.store.buildState(unknown, SEE_EVERYTHING)).toBe('missing');
  });

  it('treats a build without a project as invisible unless she may see builds without a project', async () => {
    const none = id();
    await ingest(line({ buildId: none, events: [ev('BuildStarted')] }));
    expect(await ingest(finishing(none, 'billing'), BILLING)).toMatchObject({ status: 'rejected', path: '$.buildId' });
    expect(await t.store.buildState(none, SEE_EVERYTHING)).toBe('incomplete');
    expect(await ingest(finishing(none, 'billing'), BILLING_AND_NONE)).toMatchObject({ status: 'stored', complete: true });
    expect((await t.store.getBuild(none, SEE_EVERYTHING))?.project).toBe('billing');
  });

  it('starts builds of her projects (the server assigns the ID) and appends to them', async () => {
    const started = await ingest(line({ events: [ev('BuildStarted'), ev('ProjectStructure', { rootProjectName: 'billing' })] }), BILLING);
    expect(started).toMatchObject({ status: 'stored', complete: false });
    const own = (started as { buildId: string }).buildId;
    // Moving it to another project is refused, and so is leaving it without a project.
    const move = await ingest(finishing(own, 'payments'), BILLING);
    expect(move).toMatchObject({ status: 'rejected', path: '$.events', buildId: own });
    expect((move as { error: string }).error).toContain('"payments"');
    const unset = await ingest(line({ buildId: own, events: [ev('ProjectStructure', {})] }), BILLING);
    expect(unset).toMatchObject({ status: 'rejected', path: '$.events' });
    expect(await t.store.buildState(own, BILLING)).toBe('incomplete');
    const last = finishing(own);
    expect(await ingest(last, BILLING)).toMatchObject({ status: 'stored', buildId: own, complete: true });
    expect((await t.store.getBuild(own, BILLING))?.project).toBe('billing');
    // Re-sending her finishing line is unchanged: the build is hers to see.
    expect(await ingest(last, BILLING)).toMatchObject({ status: 'unchanged', buildId: own });
  });

  it('refuses new builds of other projects or without a project, whether finished or not', async () => {
    for (const text of [completeBuild(undefined as unknown as string, 'payments'), completeBuild(undefined as unknown as string, null), line({ events: [ev('BuildStarted')] })]) {
      expect(await ingest(text, BILLING)).toMatchObject({ status: 'rejected', path: '$.events' });
    }
    expect(await ingest(completeBuild(undefined as unknown as string, null), BILLING_AND_NONE)).toMatchObject({ status: 'stored', complete: true });
    expect(await t.store.listBuilds({ visibility: SEE_EVERYTHING })).toHaveLength(1);
  });

  it('leaves unrestricted publishers as they were: their own IDs, any project', async () => {
    const b = id();
    expect(await ingest(completeBuild(b, 'payments'), SEE_EVERYTHING)).toMatchObject({ status: 'stored', buildId: b });
    expect(await ingest(completeBuild(b, 'payments').replace('"toolVersion":"8.10.2"', '"toolVersion":"9.0"'), SEE_EVERYTHING)).toMatchObject({ path: '$.toolVersion' });
  });
});
