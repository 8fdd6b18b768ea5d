// A failure group's page in Node (web/src/failure-group-text.ts, web/src/logic.ts): its address
// round-trips, its pattern splits into text and the placeholders the grouping puts, and the day
// strip is a run of consecutive days holding the builds it should.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeMessage } from '../../src/store/events/failure-groups.js';
import { DAY_MS, daySeries, hitText, patternParts, type DayCount } from '../../web/src/failure-group-text.js';
import { failureGroupUrl, routeOf } from '../../web/src/logic.js';

const NOW = Date.UTC(2026, 4, 20, 15, 30);
const TODAY = Date.UTC(2026, 4, 20);

describe("a failure group's page", () => {
  it('round-trips its address, with or without a query', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.string(), (id, query) => {
        const u = new URL(failureGroupUrl(id, query), 'http://x');
        expect(routeOf(u.pathname, u.search)).toEqual({ page: 'failure-group', id, query });
      }),
    );
    for (const bad of ['/failure-groups/0', '/failure-groups/-1', '/failure-groups/x', '/failure-groups/99999999999999999']) expect(routeOf(bad, '')).toEqual({ page: 'unknown' });
  });

  it('splits a pattern into its text and the placeholders the grouping put', () => {
    const message = fc.array(fc.oneof(fc.string(), fc.constantFrom('5012', '/tmp/a/b.txt', '0x7f3a', 'Order@1b6d3586', '2026-05-20T10:00:00Z', 'deadbeef12', '<n>', '<', '>', ' at ')), { maxLength: 12 }).map((xs) => xs.join(''));
    fc.assert(
      fc.property(message, (m) => {
        const key = normalizeMessage(m);
        const parts = patternParts(key);
        expect(parts.map((p) => p.text).join('')).toBe(key);
        for (const p of parts) if (p.placeholder) expect(p.text).toMatch(/^<(time|uuid|addr|path|hash|n)>$/);
        // Text pieces are never empty, and two text pieces never follow each other.
        parts.forEach((p, i) => {
          expect(p.text).not.toBe('');
          if (i > 0 && !p.placeholder) expect(parts[i - 1]!.placeholder).toBe(true);
        });
      }),
    );
    expect(patternParts('expected <<n>> but was <<n>>')).toEqual([
      { text: 'expected <', placeholder: false },
      { text: '<n>', placeholder: true },
      { text: '> but was <', placeholder: false },
      { text: '<n>', placeholder: true },
      { text: '>', placeholder: false },
    ]);
  });

  it('draws consecutive days, at least 14 and at most 90, ending today or on the last day it hit', () => {
    const days = fc
      .uniqueArray(fc.integer({ min: -800, max: 3 }), { maxLength: 40 })
      .chain((offsets) => fc.tuple(...offsets.map((o) => fc.integer({ min: 1, max: 50 }).map((builds): DayCount => ({ day: TODAY + o * DAY_MS, builds })))));
    fc.assert(
      fc.property(days, (input) => {
        const series = daySeries(input, NOW);
        expect(series.length).toBeGreaterThanOrEqual(14);
        expect(series.length).toBeLessThanOrEqual(90);
        series.forEach((d, i) => {
          if (i > 0) expect(d.day - series[i - 1]!.day).toBe(DAY_MS);
        });
        const first = series[0]!.day;
        const end = series[series.length - 1]!.day;
        const last = Math.max(...input.map((d) => d.day), -Infinity);
        if (input.length === 0 || last >= TODAY - 89 * DAY_MS) expect(end).toBe(Math.max(TODAY, last));
        else expect(end).toBe(last);
        // Every day in the strip holds its builds; those before it are the older ones left out.
        const inside = input.filter((d) => d.day >= first && d.day <= end);
        expect(series.reduce((n, d) => n + d.builds, 0)).toBe(inside.reduce((n, d) => n + d.builds, 0));
        for (const d of input) if (d.day < first) expect(end - d.day).toBeGreaterThanOrEqual(90 * DAY_MS);
      }),
    );
  });

  it('says how many builds and tests a group hit, and how many failures were the builds own', () => {
    expect(hitText(12, 3, 15, 2)).toBe('Hit 12 builds and 3 tests: 15 failures, 2 of them build failures.');
    expect(hitText(9, 0, 9, 9)).toBe('Hit 9 builds and 0 tests: 9 failures, all of them build failures.');
    expect(hitText(1, 1, 1, 0)).toBe('Hit 1 build and 1 test: 1 failure, all of them in tests.');
    expect(hitText(0, 0, 0, 0)).toBe('No build of these has this failure.');
  });
});
