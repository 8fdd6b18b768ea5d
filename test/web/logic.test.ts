// The web pages' pure logic: addresses as state, terms added by clicks (always valid queries that
// narrow the original), the timeline's lanes (no overlap, fewest lanes for one-after-another
// tasks), and the playground's chart days from the server's aggregate.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { daysFromTrends } from '../../playground/src/chart-data.js';
import { evaluate } from '../../src/query/evaluate.js';
import { parseQuery } from '../../src/query/index.js';
import { addTerm, buildsUrl, customValueTerm, packLanes, periodQuery, routeOf, safeNext, taskAt, term, toolLabel, toolName, trendsUrl } from '../../web/src/logic.js';

const parse = (q: string) => parseQuery(q, { now: 0 });

describe('addresses', () => {
  it('round-trip the builds list and trends state', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.stringMatching(/^[0-9a-z]{13}$/), { nil: null }), (query, after) => {
        const u = new URL(buildsUrl(query, after), 'http://x');
        expect(routeOf(u.pathname, u.search)).toEqual({ page: 'builds', query, after });
        const t = new URL(trendsUrl(query, 'week', 90), 'http://x');
        expect(routeOf(t.pathname, t.search)).toEqual({ page: 'trends', query, interval: 'week', days: 90 });
      }),
    );
    expect(routeOf('/builds/abc%20d', '')).toEqual({ page: 'build', id: 'abc d' });
    expect(routeOf('/nope', '')).toEqual({ page: 'unknown' });
  });
  it('send people only to this server after sign-in', () => {
    expect(safeNext('/builds?query=x')).toBe('/builds?query=x');
    for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', null]) expect(safeNext(bad)).toBe('/builds');
  });
});

describe('terms added by clicks', () => {
  const values = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() === s && s.length > 0 && !/[\u0000-\u001f]/.test(s));
  it('quote any value so that the term parses and matches exactly that value', () => {
    fc.assert(
      fc.property(values, (v) => {
        const r = parse(term('tag', v));
        expect(r.ok, term('tag', v)).toBe(true);
        expect(evaluate(r.expr!, { toolType: 'native', attributes: { tag: [v] } })).toBe(true);
        expect(evaluate(r.expr!, { toolType: 'native', attributes: { tag: [`${v}x`] } })).toBe(false);
      }),
    );
    fc.assert(
      fc.property(values, values, (name, value) => {
        const r = parse(customValueTerm(name, value));
        expect(r.ok, customValueTerm(name, value)).toBe(true);
        const has = (n: string, v: string) => evaluate(r.expr!, { toolType: 'native', attributes: { value: [{ name: n, value: v }] } });
        expect(has(name, value)).toBe(true);
        expect(has(name, `${value}x`)).toBe(false);
        expect(has(`${name}x`, value)).toBe(false);
      }),
    );
  });
  it('narrow the query: every build the new query matches, the old one matched', () => {
    const base = ['', 'buildOutcome:failed', 'buildTool:native or tag:CI', 'not user:ci', '(a:1'].filter((q) => q === '' || parse(q).ok);
    const builds = [
      { toolType: 'native', attributes: { buildOutcome: 'failed', tag: ['CI'], user: 'ci', project: 'inventory' } },
      { toolType: 'jsbuild', attributes: { buildOutcome: 'succeeded', tag: ['CI'], user: 'bob', project: 'billing' } },
      { toolType: 'native', attributes: { buildOutcome: 'succeeded', tag: [], user: 'eve', project: 'inventory' } },
    ];
    for (const q of base) {
      const narrowed = addTerm(q, term('project', 'inventory'));
      const before = q === '' ? undefined : parse(q).expr!;
      const after = parse(narrowed).expr!;
      for (const b of builds) {
        const match = evaluate(after, b);
        expect(match).toBe((before === undefined || evaluate(before, b)) && b.attributes.project === 'inventory');
      }
    }
    expect(addTerm('buildTool:native or tag:CI', 'user:ci')).toBe('(buildTool:native or tag:CI) user:ci');
  });
  it('limit a query to one period with instants the language reads back', () => {
    const start = Date.UTC(2026, 2, 29, 0, 0, 0);
    const end = Date.UTC(2026, 2, 30, 0, 0, 0);
    const q = periodQuery('buildOutcome:failed', start, end);
    const r = parse(q);
    expect(r.ok).toBe(true);
    const at = (t: number) => evaluate(r.expr!, { toolType: 'native', attributes: { buildOutcome: 'failed', buildStartTime: t } });
    expect([at(start - 1), at(start), at(end - 1), at(end)]).toEqual([false, true, true, false]);
  });
});

describe('tool names', () => {
  it('shows each kind as the tool people know, and an unknown kind as it is', () => {
    expect(['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild'].map(toolName)).toEqual(['Gradle', 'Maven', 'Bazel', 'sbt', 'npm', 'Python']);
    expect(toolLabel('native')).toBe('Gradle (native)');
    expect(toolName('cargo')).toBe('cargo');
    expect(toolLabel('cargo')).toBe('cargo');
  });
});

describe('timeline lanes', () => {
  const task = fc.record({ start: fc.integer({ min: 0, max: 10_000 }), duration: fc.integer({ min: 0, max: 2_000 }) });
  it('never put two overlapping tasks on one lane, and find each task under its own bar', () => {
    fc.assert(
      fc.property(fc.array(task, { maxLength: 60 }), (tasks) => {
        const { lanes, count } = packLanes(tasks);
        const byLane: number[][] = Array.from({ length: count }, () => []);
        tasks.map((_, i) => i).sort((a, b) => tasks[a]!.start - tasks[b]!.start || a - b).forEach((i) => byLane[lanes[i]!]!.push(i));
        // A task holds [start, start + duration); one of no duration holds its instant.
        const holds = (u: { start: number; duration: number }, at: number) => (u.duration === 0 ? at === u.start : u.start <= at && at < u.start + u.duration);
        for (const list of byLane) {
          for (let k = 1; k < list.length; k++) {
            const [before, after] = [tasks[list[k - 1]!]!, tasks[list[k]!]!];
            expect(after.start).toBeGreaterThanOrEqual(before.start + before.duration);
            expect(holds(before, after.start)).toBe(false);
          }
        }
        for (let i = 0; i < tasks.length; i++) {
          const t = tasks[i]!;
          if (t.duration === 0) continue;
          const found = taskAt(byLane, tasks, lanes[i]!, t.start + t.duration / 2);
          expect(found).toBe(i);
        }
        // As many lanes as tasks run at once at the busiest instant (interval graph colouring).
        let busiest = 0;
        for (const t of tasks) busiest = Math.max(busiest, tasks.filter((u) => holds(u, t.start)).length);
        expect(count).toBe(Math.max(busiest, tasks.length > 0 ? 1 : 0));
      }),
    );
  });
  it('put a task that starts at the instant of a task of no duration on another lane', () => {
    expect(packLanes([{ start: 5, duration: 0 }, { start: 5, duration: 1 }]).count).toBe(2);
    expect(packLanes([{ start: 5, duration: 0 }, { start: 5, duration: 0 }]).count).toBe(2);
    expect(packLanes([{ start: 4, duration: 1 }, { start: 5, duration: 0 }, { start: 6, duration: 0 }]).count).toBe(1);
  });
  it('put tasks that ran one after another on one lane', () => {
    const tasks = Array.from({ length: 1000 }, (_, i) => ({ start: i * 10, duration: 10 }));
    expect(packLanes(tasks).count).toBe(1);
  });
});

describe('playground chart days from the server', () => {
  it('span the first to the last day with matches, gaps kept, every match counted', () => {
    const p = (label: string, s: number, f = 0) => ({ label, succeeded: s, failed: f, unknown: 0 });
    const days = daysFromTrends([p('d1', 0), p('d2', 3, 1), p('d3', 0), p('d4', 0, 2), p('d5', 0)]);
    expect(days.map((d) => d.day)).toEqual(['d2', 'd3', 'd4']);
    expect(days.reduce((s, d) => s + d.succeeded + d.failed + d.unknown, 0)).toBe(6);
    expect(daysFromTrends([p('d1', 0)])).toEqual([]);
  });
});
