// The stored form of compressed event chunks (event-codec.ts, store migration 0008): packing and
// inflating give back the same text, at once or as a stream of slices cut anywhere (inside a
// multi-byte character too); a limit makes the at-once form decline instead of inflating a large
// text; an unknown format is a clear error, not garbage.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ATTRIBUTES_FORMAT, inflateSlices, packAttributes, packEvents, PACK_FORMAT, storedAttributes, storedEvents, unpackEvents } from '../../src/store/event-codec.js';

async function collect(it: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const s of it) out += s;
  return out;
}

async function* sliced(bytes: Uint8Array, cuts: readonly number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const c of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    if (c > from) {
      yield bytes.subarray(from, c);
      from = c;
    }
  }
  if (from < bytes.length) yield bytes.subarray(from);
}

describe('compressed event chunks', () => {
  it('start with the format byte and read back the same text, at once and in slices', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 3000 }), fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
        const packed = packEvents(text);
        expect(packed[0]).toBe(PACK_FORMAT);
        expect(unpackEvents(packed)).toBe(text);
        expect(storedEvents('', packed)).toBe(text);
        expect(await collect(inflateSlices(sliced(packed, cuts)))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('stored text without compressed bytes is read as it is', () => {
    expect(storedEvents('[[1,"BuildStarted",1,0,{}]]', null)).toBe('[[1,"BuildStarted",1,0,{}]]');
  });

  it('a text longer than the limit is declined at once and streamed in bounded pieces instead', async () => {
    const text = `[${Array.from({ length: 20_000 }, (_, i) => `[${1000 + (i % 3)},"TaskStarted",1,0,{"id":${i % 7},"path":":app:compileJava"}]`).join(',')}]`;
    const packed = packEvents(text);
    expect(packed.length).toBeLessThan(text.length / 20);
    expect(unpackEvents(packed, 64 * 1024)).toBeUndefined();
    expect(unpackEvents(packed, text.length)).toBe(text);
    const pieces: string[] = [];
    for await (const p of inflateSlices(sliced(packed, [100, 1000]))) pieces.push(p);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeGreaterThan(10);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(64 * 1024);
  });

  it('an unknown format is refused with its number', async () => {
    const packed = packEvents('[]');
    packed[0] = 9;
    expect(() => unpackEvents(packed)).toThrow('Stored event chunk of unknown format 9');
    await expect(collect(inflateSlices(sliced(packed, [])))).rejects.toThrow('unknown format 9');
  });

  it('an attributes document reads back the same from text, UTF-8 bytes and its compressed form', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.string({ unit: 'binary' }), fc.double({ noNaN: true }), fc.boolean())), (attributes) => {
        const json = JSON.stringify(attributes);
        const packed = packAttributes(json);
        expect(packed[0]).toBe(ATTRIBUTES_FORMAT);
        expect(storedAttributes(packed)).toBe(json);
        expect(storedAttributes(new Uint8Array(packed))).toBe(json);
        expect(storedAttributes(json)).toBe(json);
        expect(storedAttributes(Buffer.from(json, 'utf8'))).toBe(json);
      }),
      { numRuns: 200 },
    );
    expect(storedAttributes(null)).toBe('{}');
  });
});
