// For the migration tests of build_events: a store's event chunks in every form a migration meets
// (store migrations 0017 and 0018), and each build's events as the export sends them, to compare
// before and after (also 0014's test).

import { expect } from 'vitest';
import { openBuildStore } from '../../src/store/build-store.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { buildEventTextMessage } from '../../src/export/messages.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { completeBuild, ev, id, line } from './support.js';

export const NOW = Date.UTC(2026, 0, 1);

/** Each build's events as the export sends them (its SSE messages, concatenated), by ID. */
export async function exported(store: BuildStore, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const buildId of ids) {
    let text = '';
    let sequence = 0;
    for await (const e of store.streamEventTexts(buildId)) text += buildEventTextMessage(++sequence, e);
    out.set(buildId, text);
  }
  return out;
}

export interface Corpus {
  readonly packedLines: string[];
  readonly textLines: string[];
  readonly streamed: string;
  /** The streamed build's events, all three parts. */
  readonly whole: BuildEvent[];
  readonly parts: string[];
  readonly ids: string[];
}

/**
 * `packed` finished builds with compressed chunks and `text` with text chunks (demo builds of the
 * seeds `seed` and `seed + 1`), and a build of which two of three parts are stored.
 */
export async function storeCorpus(handle: DatabaseHandle, store: BuildStore, o: { packed: number; text: number; seed: number }): Promise<Corpus> {
  const packedLines = [...demoBuilds({ builds: o.packed, seed: o.seed, now: NOW })];
  await store.ingestNdjson(packedLines.join('\n'));
  const textStore = await openBuildStore(handle, { packEvents: false });
  const textLines = [...demoBuilds({ builds: o.text, seed: o.seed + 1, now: NOW + 86_400_000 })];
  await textStore.ingestNdjson(textLines.join('\n'));
  const streamed = id();
  const whole = (JSON.parse(completeBuild(streamed, 'alpha', [ev('UserTag', { tag: 'streamed' })])) as { events: BuildEvent[] }).events;
  const parts = [whole.slice(0, 1), whole.slice(1, 3), whole.slice(3)].map((events) => line({ buildId: streamed, events }));
  expect((await textStore.ingestNdjson(parts.slice(0, 2).join('\n'))).map((r) => r.status)).toEqual(['stored', 'stored']);
  await textStore.close();
  const ids = [...(await store.listBuilds({ visibility: SEE_EVERYTHING })).map((b) => b.id), streamed];
  expect(ids.length).toBe(o.packed + o.text + 1);
  return { packedLines, textLines, streamed, whole, parts, ids };
}
