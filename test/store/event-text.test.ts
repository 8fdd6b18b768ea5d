// The export's path over stored events (event-codec.ts eventText, BuildStore.streamEventTexts):
// each event's stored text is copied into its message, and the result must be the bytes the
// former path made (decode the tuple, then JSON.stringify the event), for every stored form:
// arbitrary data (escapes, lone surrogates, `__proto__` and integer-like keys, exponent numbers),
// tuples of another shape (which take the slow way), both databases, text and compressed chunks.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildEventMessage, buildEventTextMessage } from '../../src/export/messages.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { decodeEvent, encodeEvents, eventText } from '../../src/store/events/event-codec.js';
import { ArrayElementSplitter } from '../../src/store/events/event-splitter.js';
import { SEE_EVERYTHING, type BuildEvent, type BuildStore } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { completeBuild, ev, id, line, openTestStore } from './support.js';

/** What the export sent before: the tuple decoded, then the event encoded again. */
function former(tuple: string): string {
  const e = decodeEvent(tuple);
  return JSON.stringify({ timestamp: e.timestamp, type: e.type, data: e.data ?? {} });
}

function tuplesOf(chunk: string): string[] {
  const splitter = new ArrayElementSplitter();
  const out = [...splitter.push(chunk)];
  splitter.end();
  return out;
}

const awkwardKey = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('__proto__', 'constructor', '0', '10', '4294967295', '-1', '01', ''));
const awkwardNumber = fc.oneof(fc.double(), fc.constantFrom(1e21, -0, 5e-324, 1.7976931348623157e308, 123456789012345680000, 0.1));
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'binary' }),
    awkwardNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(awkwardKey, tie('v'), { maxKeys: 4 }),
  ),
})).v;
const event: fc.Arbitrary<BuildEvent> = fc.record({
  timestamp: fc.oneof(fc.integer(), fc.maxSafeNat(), fc.constant(-0)),
  type: fc.record({ majorVersion: fc.nat(), minorVersion: fc.nat(), eventType: fc.oneof(fc.string({ unit: 'binary', minLength: 1 }), fc.constantFrom('BuildStarted', 'a"b', 'a\\b', 'x,y', '[{}]')) }),
  data: fc.dictionary(awkwardKey, value, { maxKeys: 6 }),
});

describe('eventText', () => {
  it('gives the text the former path made, for any stored events', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 5 }), (events) => {
        const tuples = tuplesOf(encodeEvents(events));
        expect(tuples).toHaveLength(events.length);
        tuples.forEach((t, i) => {
          const got = eventText(t);
          expect(got.json).toBe(former(t));
          expect(got.eventType).toBe(events[i]!.type.eventType);
          expect(buildEventTextMessage(i + 1, got)).toBe(buildEventMessage(i + 1, decodeEvent(t)));
        });
      }),
      { numRuns: 500 },
    );
  });

  it('takes the slow way for tuples of another shape, with the same answer', () => {
    for (const t of [
      '[ 1, "A", 1, 0, {"a":1} ]',
      '[1,"A",1,0,null]',
      '[1,"A",1,0]',
      '[1.5e3,"A",1,0,{"x":[1,2]}]',
      '[1,"A\\"B",1,0,{}]',
      '[1,"A",1,0,{"a":"}]"}]',
      '[1,"A",1,0,{"b":1,"a":2}]',
    ]) {
      expect(eventText(t).json).toBe(former(t));
      expect(eventText(t).eventType).toBe(decodeEvent(t).type.eventType);
    }
    // A data that is not an object is sent as {} as before.
    expect(eventText('[1,"A",1,0,null]').json).toBe('{"timestamp":1,"type":{"majorVersion":1,"minorVersion":0,"eventType":"A"},"data":{}}');
  });
});

const dialects = [
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
];

async function messages(store: BuildStore, buildId: string, eventTypes?: string[]): Promise<{ texts: string; decoded: string }> {
  const options = eventTypes === undefined ? {} : { eventTypes };
  let texts = '';
  let n = 0;
  for await (const e of store.streamEventTexts(buildId, options)) texts += buildEventTextMessage(++n, e);
  let decoded = '';
  n = 0;
  for await (const e of store.streamEvents(buildId, options)) decoded += buildEventMessage(++n, e);
  return { texts, decoded };
}

describe.each(dialects)('streamEventTexts on $name', ({ name, skip }) => {
  it.skipIf(skip).each([{ packEvents: true }, { packEvents: false }])('sends the bytes of the former path, chunks stored compressed: $packEvents', async ({ packEvents }) => {
    const t = await openTestStore(name, { packEvents });
    try {
      const lines = [...demoBuilds({ builds: 60, seed: 11, now: Date.UTC(2026, 0, 1) })];
      // A build of two chunks with awkward data, and a large chunk read in slices.
      const odd = id();
      const big = id();
      lines.push(line({ buildId: odd, events: [ev('UserTag', { '\u2028': '\ud800', ['__proto__']: [1e21, -0, 1.5e-7] }, 5)] }));
      lines.push(completeBuild(odd, 'alpha', [ev('UserTag', { tag: 'a"b\\c', '10': 1, '2': { '': null } })]));
      lines.push(completeBuild(big, 'alpha', Array.from({ length: 30_000 }, (_, i) => ev('TaskFinished', { path: `:m${i % 50}:compile`, n: i, s: 'é€𝄞' }))));
      const results = await t.store.ingestNdjson(lines.join('\n'));
      expect(results.filter((r) => r.status !== 'stored')).toEqual([]);
      const builds = await t.store.listBuilds({ visibility: SEE_EVERYTHING });
      expect(builds.map((b) => b.id)).toEqual(expect.arrayContaining([odd, big]));
      for (const b of builds) {
        const m = await messages(t.store, b.id);
        expect(m.texts.length).toBeGreaterThan(0);
        expect(m.texts).toBe(m.decoded);
      }
      const some = await messages(t.store, odd, ['UserTag', 'BuildFinished']);
      expect(some.texts).toBe(some.decoded);
      expect(some.texts.match(/event: BuildEvent/g)).toHaveLength(3);
    } finally {
      await t.close();
    }
  });
});
