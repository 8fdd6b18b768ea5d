import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/query/suggest.js';

describe('editDistance and closest', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions, case-insensitively', () => {
    expect(editDistance('tag', 'tag')).toBe(0);
    expect(editDistance('TAG', 'tag')).toBe(0);
    expect(editDistance('tga', 'tag')).toBe(1);
    expect(editDistance('usr', 'user')).toBe(1);
    expect(editDistance('buildOutcom', 'buildOutcome')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('is a symmetric measure that is zero only for equal strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = editDistance(a, b);
        expect(d).toBe(editDistance(b, a));
        expect(d === 0).toBe(a.toLowerCase() === b.toLowerCase());
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
  });

  it('suggests only within a third of the typed length', () => {
    expect(closest('tga', ['tag', 'user'])).toBe('tag');
    expect(closest('ab', ['ac'])).toBeUndefined();
    expect(closest('buildOutcme', ['buildOutcome', 'buildTool'])).toBe('buildOutcome');
    expect(closest('xxxxxx', ['buildOutcome'])).toBeUndefined();
  });
});
