// The playground's pure parts, in Node: chart counting, share links, lexer-based highlighting,
// display formats.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countPerDay, dayOf, outcomeOf, type ChartInput } from '../../playground/src/chart-data.js';
import { formatDuration, formatTime } from '../../ui/format.js';
import { hashForQuery, queryFromHash } from '../../playground/src/share.js';
import { classify } from '../../ui/tokens.js';
import { exampleFor } from '../../playground/src/field-examples.js';
import { EXAMPLES } from '../../playground/src/examples.js';
import { FIELDS, parseQuery } from '../../src/query/index.js';

const DAY = 86_400_000;
const input = fc.record({
  time: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  outcome: fc.constantFrom('succeeded' as const, 'failed' as const, 'unknown' as const),
});

describe('matches per day', () => {
  it('counts every match once, in its UTC day, over contiguous days', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.array(fc.record({ offset: fc.integer({ min: 0, max: 40 * DAY }), outcome: input.map((i) => i.outcome) }), { maxLength: 60 }),
        (base, rows) => {
          const items: ChartInput[] = rows.map((r) => ({ time: base + r.offset, outcome: r.outcome }));
          const days = countPerDay(items, 62);
          const total = days.reduce((n, d) => n + d.succeeded + d.failed + d.unknown, 0);
          expect(total).toBe(items.length);
          for (let i = 1; i < days.length; i++) {
            expect(Date.parse(days[i]!.day) - Date.parse(days[i - 1]!.day)).toBe(DAY);
          }
          for (const d of days) {
            for (const o of ['succeeded', 'failed', 'unknown'] as const) {
              expect(d[o]).toBe(items.filter((it) => it.outcome === o && dayOf(it.time) === d.day).length);
            }
          }
        },
      ),
    );
  });

  it('keeps only the most recent days when the matches span more than maxDays', () => {
    const items: ChartInput[] = [
      { time: Date.UTC(2024, 0, 1, 12), outcome: 'failed' },
      { time: Date.UTC(2024, 2, 1, 12), outcome: 'succeeded' },
    ];
    const days = countPerDay(items, 10);
    expect(days).toHaveLength(10);
    expect(days.at(-1)).toEqual({ day: '2024-03-01', succeeded: 1, failed: 0, unknown: 0 });
    expect(countPerDay([])).toEqual([]);
  });

  it('reads an outcome attribute, anything else is unknown', () => {
    expect(outcomeOf('failed')).toBe('failed');
    expect(outcomeOf('succeeded')).toBe('succeeded');
    expect(outcomeOf(undefined)).toBe('unknown');
    expect(outcomeOf('FAILED')).toBe('unknown');
  });
});

describe('share links', () => {
  it('carry any query through the fragment unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (q) => {
        expect(queryFromHash(hashForQuery(q))).toBe(q);
      }),
    );
    expect(hashForQuery('tag:"a b" or -user:bot')).toBe('#q=tag%3A%22a%20b%22%20or%20-user%3Abot');
  });

  it('ignore fragments that carry no query', () => {
    expect(queryFromHash('')).toBeNull();
    expect(queryFromHash('#results')).toBeNull();
    expect(queryFromHash('#q=%E0%A4%A')).toBeNull();
  });
});

describe('highlighting from the project lexer', () => {
  it('classifies fields, operators, values, keywords, negation, brackets and wildcards', () => {
    const q = 'buildOutcome:failed (tag:CI or tag:"night*") -user:bot buildDuration:[1m to 5m]';
    const seen = classify(q).map((t) => [q.slice(t.from, t.to), t.cls]);
    expect(seen).toEqual([
      ['buildOutcome', 'field'],
      [':', 'operator'],
      ['failed', 'value'],
      ['(', 'paren'],
      ['tag', 'field'],
      [':', 'operator'],
      ['CI', 'value'],
      ['or', 'keyword'],
      ['tag', 'field'],
      [':', 'operator'],
      ['"night', 'string'],
      ['*', 'wildcard'],
      ['"', 'string'],
      [')', 'paren'],
      ['-', 'negation'],
      ['user', 'field'],
      [':', 'operator'],
      ['bot', 'value'],
      ['buildDuration', 'field'],
      [':', 'operator'],
      ['[', 'paren'],
      ['1m', 'value'],
      ['to', 'keyword'],
      ['5m', 'value'],
      [']', 'paren'],
    ]);
  });

  it('gives ordered, in-bounds, non-empty tokens for any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (q) => {
        const tokens = classify(q);
        for (const t of tokens) {
          expect(t.from).toBeGreaterThanOrEqual(0);
          expect(t.to).toBeLessThanOrEqual(q.length);
          expect(t.to).toBeGreaterThan(t.from);
        }
        for (let i = 1; i < tokens.length; i++) expect(tokens[i]!.from).toBeGreaterThanOrEqual(tokens[i - 1]!.from);
      }),
    );
  });

  it('keeps an escaped star inside the value', () => {
    const q = 'tag:a\\*b*';
    expect(classify(q).map((t) => [q.slice(t.from, t.to), t.cls])).toEqual([
      ['tag', 'field'],
      [':', 'operator'],
      ['a\\*b', 'value'],
      ['*', 'wildcard'],
    ]);
  });
});

describe('display formats', () => {
  it('prints UTC times and readable durations', () => {
    expect(formatTime(Date.UTC(2024, 2, 1, 8, 5, 9))).toBe('2024-03-01 08:05:09');
    expect(formatTime(undefined)).toBe('');
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_345)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m 05s');
    expect(formatDuration(3_723_000)).toBe('1h 02m 03s');
    expect(formatDuration('x')).toBe('');
  });
});

describe('field reference examples', () => {
  it('give every catalog field an example that parses without a problem and uses that field', () => {
    for (const field of FIELDS) {
      const example = exampleFor(field);
      const result = parseQuery(example);
      expect(result.diagnostics, `${field.name}: ${example}`).toEqual([]);
      expect(result.expr?.kind === 'term' && result.expr.field.name, example).toBe(field.name);
    }
  });

  it('include every example query of the search semantics, each valid', () => {
    expect(EXAMPLES).toHaveLength(11);
    for (const ex of EXAMPLES) expect(parseQuery(ex.query).diagnostics, ex.query).toEqual([]);
  });
});
