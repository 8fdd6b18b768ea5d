// The ingest's line splitter (src/store/ingest/lines.ts): a stream of bytes cut anywhere, or of
// strings cut anywhere, gives the lines (numbers and texts) that the whole input decoded at once
// gives. The reference is the whole text split at its line feeds (numberedLineChunks of one
// string), after TextDecoder's decoding of all the bytes (which drops a leading byte order mark and
// replaces what is not UTF-8).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { numberedLineChunks, textOf, type NumberedLine } from '../../src/store/ingest/lines.js';

/** The lines, each with its text decoded (a byte stream's lines hold their bytes: textOf). */
async function all(input: string | AsyncIterable<string | Uint8Array>): Promise<{ line: number; text: string }[]> {
  const out: NumberedLine[] = [];
  for await (const chunk of numberedLineChunks(input)) out.push(...chunk);
  return out.map((l) => ({ line: l.line, text: textOf(l) }));
}

async function* pieces<T extends string | Uint8Array>(parts: readonly T[]): AsyncGenerator<T> {
  for (const p of parts) yield p;
}

/** `whole` cut at the given positions (sorted, within its length). */
function cut<T extends string | Uint8Array>(whole: T, at: readonly number[]): T[] {
  const points = [...new Set(at.map((a) => a % (whole.length + 1)))].sort((a, b) => a - b);
  const out: T[] = [];
  let from = 0;
  for (const p of [...points, whole.length]) {
    out.push(whole.slice(from, p) as T);
    from = p;
  }
  return out;
}

/** Lines as the NDJSON inputs have them: any text (blank and whitespace-only too), LF or CRLF ends, the last one with or without. */
const text = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('', '   ', '\t', '\u00a0', '{"a":"é😀"}', '\r', 'x\ry')).map((s) => s.replaceAll('\n', ' ')),
        fc.constantFrom('\n', '\r\n'),
      ),
      { maxLength: 12 },
    ),
    fc.option(fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\n', ' ')), { nil: undefined }),
  )
  .map(([lines, last]) => lines.map(([t, end]) => t + end).join('') + (last ?? ''));

const cuts = fc.array(fc.nat(), { maxLength: 12 });
const encoder = new TextEncoder();
const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

describe('numberedLineChunks', () => {
  it('gives the same lines for UTF-8 bytes cut anywhere as for the whole text decoded at once', async () => {
    await fc.assert(
      fc.asyncProperty(text, cuts, fc.boolean(), async (t, at, bom) => {
        const body = encoder.encode(t);
        const bytes = bom ? Buffer.concat([BOM, body]) : Buffer.from(body);
        expect(await all(pieces(cut(bytes, at)))).toEqual(await all(new TextDecoder().decode(bytes)));
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same lines for any bytes, not UTF-8 included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }).map((b) => b.map((x) => (x % 7 === 0 ? 0x0a : x % 11 === 0 ? 0x0d : x))), cuts, async (bytes, at) => {
        expect(await all(pieces(cut(Buffer.from(bytes), at)))).toEqual(await all(new TextDecoder().decode(bytes)));
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same lines for a string cut anywhere (surrogate pairs split included) as for the whole string', async () => {
    await fc.assert(
      fc.asyncProperty(text, cuts, async (t, at) => {
        expect(await all(pieces(cut(t, at)))).toEqual(await all(t));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a byte stream\'s lines as their bytes, without the line end, and a string stream\'s as text', async () => {
    const kept: NumberedLine[] = [];
    for await (const chunk of numberedLineChunks(pieces([Buffer.from('{"a":"é"}\r\n \u00a0\n{"b":1}')]))) kept.push(...chunk);
    expect(kept.map((l) => (typeof l.text === 'string' ? 'text' : Buffer.from(l.text).toString('utf8')))).toEqual(['{"a":"é"}', '{"b":1}']);
    const texts: NumberedLine[] = [];
    for await (const chunk of numberedLineChunks(pieces(['{"a":1}\n', '{"b":1}']))) texts.push(...chunk);
    expect(texts).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '{"b":1}' },
    ]);
  });

  it('counts every line, blank ones included, and drops a byte order mark split over pieces', async () => {
    const bytes = Buffer.concat([BOM, Buffer.from('{"a":1}\r\n\r\n  \n{"b":2}\n{"c":3}')]);
    const lines = await all(pieces([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2, 9), bytes.subarray(9)]));
    expect(lines).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 4, text: '{"b":2}' },
      { line: 5, text: '{"c":3}' },
    ]);
  });
});
