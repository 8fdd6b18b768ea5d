// Who prepares the parts of an ingest (src/store/ingest/part-queue.ts): whatever the worker's
// answer times, every part comes out in order, prepared once, by this thread or the worker; the
// input's first part never waits for the worker; a bulk load gives the worker at most two parts
// at a time and prepares here the parts it was not given.

import { setImmediate } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { textOf, type NumberedLine } from '../../src/store/ingest/lines.js';
import { PartQueue } from '../../src/store/ingest/part-queue.js';
import type { PreparedLine } from '../../src/store/ingest/prepare.js';

/** What "preparing" returns here: each line's number, with who prepared it. */
const prepared = (lines: readonly NumberedLine[], by: string): PreparedLine[] =>
  lines.map((l) => ({ line: l.line, prepared: { ok: false, path: by, error: textOf(l) } }));

describe('the parts of an ingest and who prepares them', () => {
  it.each([true, false])('come out in order, each prepared once; sharing: %s', async (share) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(4), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 3 }),
        async (sizes, delays, ahead) => {
          let line = 0;
          const parts = sizes.map((n) => Array.from({ length: n }, () => ({ line: ++line, text: `line ${line}` })));
          const preparedBy = new Map<number, string[]>();
          const note = (lines: readonly NumberedLine[], by: string) => {
            for (const l of lines) preparedBy.set(l.line, [...(preparedBy.get(l.line) ?? []), by]);
          };
          let out = 0;
          let mostOut = 0;
          let jobs = 0;
          const queue = new PartQueue({
            share,
            here: (lines) => {
              note(lines, 'here');
              return prepared(lines, 'here');
            },
            worker: async (lines) => {
              mostOut = Math.max(mostOut, ++out);
              for (let i = delays[jobs++ % delays.length]!; i > 0; i--) await setImmediate();
              note(lines, 'worker');
              out--;
              return prepared(lines, 'worker');
            },
          });
          // As the ingest does: read parts, keep at most `ahead` waiting beyond the one written.
          const written: number[] = [];
          const take = async () => {
            const p = await queue.next();
            expect(p.lines.map((l) => l.line)).toEqual(p.texts.map((t) => t.line));
            for (const l of p.lines) expect(l.prepared.ok === false && l.prepared.path).toBe(preparedBy.get(l.line)?.[0]);
            written.push(...p.lines.map((l) => l.line));
          };
          for (const part of parts) {
            queue.push(part);
            while (queue.length > ahead + 1) await take();
          }
          while (queue.length > 0) await take();
          expect(written).toEqual(Array.from({ length: line }, (_, i) => i + 1));
          // Once each; the first part here; the worker at most two deep when sharing.
          for (let l = 1; l <= line; l++) expect(preparedBy.get(l)).toHaveLength(1);
          for (const l of parts[0]!) expect(preparedBy.get(l.line)).toEqual(['here']);
          if (share) expect(mostOut).toBeLessThanOrEqual(2);
          else for (const part of parts.slice(1)) for (const l of part) expect(preparedBy.get(l.line)).toEqual(['worker']);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('prepares everything here without a worker', async () => {
    const queue = new PartQueue({ share: true, here: (lines) => prepared(lines, 'here'), worker: undefined });
    for (let i = 1; i <= 3; i++) queue.push([{ line: i, text: '' }]);
    const got: string[] = [];
    while (queue.length > 0) for (const l of (await queue.next()).lines) got.push(l.prepared.ok ? '' : l.prepared.path);
    expect(got).toEqual(['here', 'here', 'here']);
  });

  it('a part that fails to prepare here fails when it is written, not the part written before it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const queue = new PartQueue({
      share: true,
      here: (lines) => {
        if (lines[0]!.line === 4) throw new Error('part 4 is broken');
        return prepared(lines, 'here');
      },
      worker: async (lines) => {
        await gate;
        return prepared(lines, 'worker');
      },
    });
    for (let i = 1; i <= 4; i++) queue.push([{ line: i, text: '' }]);
    await queue.next();
    // Part 2 is at the worker; part 4, taken here meanwhile, fails.
    const second = queue.next();
    await setImmediate();
    await setImmediate();
    release();
    expect((await second).lines[0]!.line).toBe(2);
    expect((await queue.next()).lines[0]!.line).toBe(3);
    await expect(queue.next()).rejects.toThrow('part 4 is broken');
  });

  it('when sharing, prepares here a part the worker was not given while the worker is slow', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const queue = new PartQueue({
      share: true,
      here: (lines) => prepared(lines, 'here'),
      worker: async (lines) => {
        await gate;
        return prepared(lines, 'worker');
      },
    });
    for (let i = 1; i <= 5; i++) queue.push([{ line: i, text: '' }]);
    const by = async () => (await queue.next()).lines.map((l) => (l.prepared.ok ? '' : l.prepared.path))[0];
    expect(await by()).toBe('here'); // the first part
    const second = by();
    // Parts 2 and 3 are at the worker, which holds them: part 5, the last one not given, is taken here.
    await setImmediate();
    await setImmediate();
    release();
    expect(await second).toBe('worker');
    expect(await by()).toBe('worker');
    // Part 4 went to the worker when it answered; part 5 was prepared here.
    expect(await by()).toBe('worker');
    expect(await by()).toBe('here');
  });
});
