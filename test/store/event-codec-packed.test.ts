// The stored form of compressed event chunks (event-codec.ts, store migration 0008): packing and
// inflating give back the same text, at once or as a stream of slices cut anywhere (inside a
// multi-byte character too); a limit makes the at-once form decline instead of inflating a large
// text; an unknown format is a clear error, not garbage.

import fc from 'fast-check';
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ATTRIBUTES_DICTIONARY_2, EVENT_DICTIONARY_1 } from '../../src/store/events/compact-dictionary.js';
import { ATTRIBUTES_FORMAT, inflateSlices, packAttributes, packEvents, PACK_FORMAT, storedAttributes, storedEvents, unpackEvents } from '../../src/store/events/event-codec.js';

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

  // Small chunks are inflated by one reused inflater (event-codec.ts inflateSmall); whatever it
  // cannot answer goes to inflateRawSync. These check that the two never differ.
  it('reads every small chunk as inflateRawSync does, one after another, formats interleaved', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 4000 }), fc.boolean()), { minLength: 1, maxLength: 6 }), (texts) => {
        for (const [text, attributes] of texts) {
          const packed = attributes ? packAttributes(text) : packEvents(text);
          const format = packed[0] === PACK_FORMAT ? EVENT_DICTIONARY_1 : ATTRIBUTES_DICTIONARY_2;
          const expected = inflateRawSync(packed.subarray(1), { dictionary: Buffer.from(format) }).toString('utf8');
          expect(expected).toBe(text);
          expect(unpackEvents(packed)).toBe(text);
          expect(unpackEvents(packed, 64 * 1024)).toBe(text);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a limit below the text declines, and a text longer than the reused buffer is still read whole', () => {
    const text = JSON.stringify(Array.from({ length: 9000 }, (_, i) => [i, 'TaskFinished', 1, 0, { n: i * 7919 }]));
    expect(text.length).toBeGreaterThan(64 * 1024);
    const packed = packEvents(text);
    expect(unpackEvents(packed)).toBe(text);
    expect(unpackEvents(packed, 64 * 1024)).toBeUndefined();
    const small = packEvents('[[1,"A",1,0,{"a":"0123456789"}]]');
    expect(unpackEvents(small, 10)).toBeUndefined();
    expect(unpackEvents(small, 100)).toBe('[[1,"A",1,0,{"a":"0123456789"}]]');
  });

  it('a corrupt or cut chunk is the error inflateRawSync gives, and the next chunk reads fine', () => {
    const text = JSON.stringify(Array.from({ length: 50 }, (_, i) => [i, 'TaskStarted', 1, 0, { path: `:m${i}` }]));
    const packed = packEvents(text);
    const cut = packed.subarray(0, packed.length - 5);
    expect(() => unpackEvents(cut)).toThrow('unexpected end of file');
    expect(unpackEvents(packed)).toBe(text);
    const corrupt = Buffer.from(packed);
    corrupt[1] = 0xff;
    corrupt[2] = 0xff;
    expect(() => unpackEvents(corrupt)).toThrow(/invalid|incorrect/);
    expect(unpackEvents(packed)).toBe(text);
    const trailing = Buffer.concat([packed, Buffer.from('garbage')]);
    expect(unpackEvents(trailing)).toBe(text);
    expect(unpackEvents(packed)).toBe(text);
  });
});
