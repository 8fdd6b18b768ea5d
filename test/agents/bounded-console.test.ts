// The console every agent keeps (src/agents/bounded-console.ts): for any writes, the kept text of
// each stream, in order, is the prefix of everything written up to the bound; the last chunk says
// `truncated` exactly when something was cut; merged chunks never mix streams.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedConsole, type ConsoleStream } from '../../src/agents/bounded-console.js';

const write = fc.tuple(fc.constantFrom<ConsoleStream>('stdout', 'stderr'), fc.string({ maxLength: 12 }));

describe('the bounded console', () => {
  it('keeps the prefix of the writes up to the bound, and says when it cut', () => {
    fc.assert(
      fc.property(fc.array(write, { maxLength: 30 }), fc.integer({ min: 0, max: 80 }), fc.constantFrom(0, 5, 8192), (writes, limit, mergeUpTo) => {
        const kept = new BoundedConsole<number>(mergeUpTo, limit);
        writes.forEach(([stream, text], i) => kept.add(stream, text, i));
        const all = writes.map(([, text]) => text).join('');
        expect(kept.chunks.map((c) => c.text).join('')).toBe(all.slice(0, limit));
        expect(kept.chunks.every((c) => c.text !== '')).toBe(true);
        expect(kept.chunks.slice(0, -1).some((c) => c.truncated)).toBe(false);
        expect(kept.chunks.at(-1)?.truncated === true).toBe(all.length > limit && kept.chunks.length > 0);
        // Each chunk's text is writes of its own stream only.
        let at = 0;
        for (const c of kept.chunks) {
          let taken = 0;
          while (taken < c.text.length) {
            const [stream, text] = writes[at++]!;
            if (text === '') continue;
            expect(stream).toBe(c.stream);
            taken += text.length;
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
