// The lines a bulk load on SQLite sets aside for its open transaction (src/store/ingest/transaction-lines.ts):
// they come back exactly as added, in order and in parts of the size asked, until cleared; the
// temporary file goes with `close`.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NumberedLine } from '../../src/store/ingest/lines.js';
import { transactionLines } from '../../src/store/ingest/transaction-lines.js';

async function all(parts: AsyncGenerator<NumberedLine[]>): Promise<NumberedLine[][]> {
  const out: NumberedLine[][] = [];
  for await (const p of parts) out.push(p);
  return out;
}

// Any text a line of the input can be: no line feed (the input was split at them), but tabs,
// carriage returns (also at the end), and characters of any width.
const text = fc
  .oneof(fc.string({ unit: fc.constantFrom('\t', '\r', '{', '"', 'é', '😀', ' ') }), fc.string({ unit: 'grapheme' }))
  .map((s) => s.replace(/\n/g, ' '));
const lineTexts = fc.array(text, { maxLength: 40 });

describe('transaction lines', () => {
  let dir: string;
  let before: string | undefined;
  beforeEach(() => {
    // A temporary directory of this test's own, so that what is left in it is ours to count.
    dir = mkdtempSync(join(tmpdir(), 'bs-aside-test-'));
    before = process.env.TMPDIR;
    process.env.TMPDIR = dir;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives back every line added since the last clear, unchanged and in order, in parts of the size asked', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(lineTexts, { maxLength: 5 }), lineTexts, fc.integer({ min: 1, max: 7 }), async (cleared, kept, size) => {
        const lines = transactionLines();
        try {
          let n = 0;
          const numbered = (texts: string[]): NumberedLine[] => texts.map((t) => ({ line: (n += 3), text: t }));
          for (const part of cleared) lines.add(numbered(part));
          lines.clear();
          const expected = numbered(kept);
          // Added in parts of 3, read back in parts of `size`.
          for (let i = 0; i < expected.length; i += 3) lines.add(expected.slice(i, i + 3));
          const parts = await all(lines.parts(size));
          expect(parts.flat()).toEqual(expected);
          expect(parts.every((p, i) => (i < parts.length - 1 ? p.length === size : p.length >= 1 && p.length <= size))).toBe(true);
          // Read twice: reading takes nothing away.
          expect((await all(lines.parts(size))).flat()).toEqual(expected);
        } finally {
          lines.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads back lines larger than a read of the file, and nothing once cleared', async () => {
    const lines = transactionLines();
    try {
      const big = [
        { line: 1, text: 'x'.repeat(3 << 20) },
        { line: 7, text: '€'.repeat(700_000) + '\r' },
      ];
      lines.add(big);
      expect((await all(lines.parts(100))).flat()).toEqual(big);
      lines.clear();
      expect(await all(lines.parts(100))).toEqual([]);
      lines.add([{ line: 9, text: '{}' }]);
      expect(await all(lines.parts(100))).toEqual([[{ line: 9, text: '{}' }]]);
    } finally {
      lines.close();
    }
  });

  it('leaves nothing in the temporary directory, even before it is closed (a killed load leaves no file behind)', async () => {
    const lines = transactionLines();
    lines.clear();
    expect(await all(lines.parts(10))).toEqual([]);
    lines.add([{ line: 1, text: '{"a":1}' }]);
    expect(readdirSync(dir)).toEqual([]);
    // The file is gone from the directory, not from the descriptor.
    lines.add([{ line: 2, text: '{"b":2}' }]);
    expect((await all(lines.parts(10))).flat()).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '{"b":2}' },
    ]);
    lines.close();
    expect(readdirSync(dir)).toEqual([]);
    // Closing twice is harmless.
    lines.close();
  });
});
