// The incremental reading of a stored chunk: cut anywhere, it yields exactly the elements
// JSON.parse finds in the whole text.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ArrayElementSplitter } from '../../src/store/events/event-splitter.js';
import { decodeEvent, decodeEvents, encodeEvents } from '../../src/store/events/event-codec.js';
import type { BuildEvent } from '../../src/store/types.js';

function cutAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

function split(slices: readonly string[]): string[] {
  const s = new ArrayElementSplitter();
  const out: string[] = [];
  for (const slice of slices) for (const e of s.push(slice)) out.push(e);
  s.end();
  return out;
}

const event: fc.Arbitrary<BuildEvent> = fc.record({
  timestamp: fc.integer(),
  type: fc.record({ majorVersion: fc.nat(), minorVersion: fc.nat(), eventType: fc.string({ maxLength: 12 }) }),
  // Strings with quotes, backslashes, brackets and commas are the cases a splitter gets wrong.
  data: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })) as fc.Arbitrary<Readonly<Record<string, unknown>>>,
});

describe('ArrayElementSplitter', () => {
  it('yields the elements JSON.parse finds, wherever the text is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), (values, cuts) => {
        const text = JSON.stringify(values, null, cuts.length % 2 ? 1 : undefined);
        expect(split(cutAt(text, cuts)).map((e) => JSON.parse(e))).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('decodes stored events one by one as decodeEvents decodes them all', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 10 }), (events, cuts) => {
        const text = encodeEvents(events);
        expect(split(cutAt(text, cuts)).map(decodeEvent)).toEqual(decodeEvents(text));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a chunk cut short', () => {
    const s = new ArrayElementSplitter();
    expect([...s.push('[[1,"a"],[2,"b')]).toEqual(['[1,"a"]']);
    expect(() => s.end()).toThrow(/cut short/);
  });
});
