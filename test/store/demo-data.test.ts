// Demo data: deterministic, all six tools, every catalog field populated, plausible shapes.

import { describe, expect, it } from 'vitest';
import { FIELDS, TOOL_TYPES } from '../../src/query/catalog.js';
import { deriveAttributes } from '../../src/store/events/derive.js';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { TEST_OUTCOME_CODES, testRunsOf } from '../../src/store/events/test-runs.js';
import type { BuildEvent } from '../../src/store/types.js';
import { validateRecord } from '../../src/store/ingest/validate.js';

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;

describe('demoBuilds', () => {
  const lines = [...demoBuilds({ builds: 600, seed: 9, now: NOW })];
  const records = lines.map((l) => {
    const v = validateRecord(JSON.parse(l));
    if (!v.ok) throw new Error(`${v.path}: ${v.error}`);
    return v.record;
  });

  it('is deterministic per seed and differs between seeds', () => {
    const again = [...demoBuilds({ builds: 600, seed: 9, now: NOW })];
    expect(again.every((l, i) => l === lines[i])).toBe(true);
    const other = [...demoBuilds({ builds: 600, seed: 10, now: NOW })];
    expect(other.filter((l, i) => l === lines[i]).length).toBe(0);
  });

  it('produces valid lines of all six tools with unique IDs and about 30 events, under 60 with tests', () => {
    expect(new Set(records.map((r) => r.toolType))).toEqual(new Set(TOOL_TYPES));
    expect(new Set(records.map((r) => r.buildId)).size).toBe(600);
    const mean = records.reduce((n, r) => n + r.events.length, 0) / records.length;
    expect(mean).toBeGreaterThan(28);
    expect(mean).toBeLessThan(40);
    for (const r of records) {
      expect(r.events.length).toBeGreaterThanOrEqual(24);
      expect(r.events.length).toBeLessThanOrEqual(60);
      expect(r.events.some((e) => e.type.eventType === 'TaskStarted')).toBe(true);
      expect(r.events.some((e) => e.type.eventType === 'TaskFinished')).toBe(true);
      expect(r.events.at(-1)!.type.eventType).toBe('BuildFinished');
      const ts = r.events.map((e) => e.timestamp);
      expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    }
  });

  it('spreads start times over the last 30 days ending near now', () => {
    const starts = records.map((r) => r.events[0]!.timestamp);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(NOW - 30 * DAY);
    expect(Math.min(...starts)).toBeLessThan(NOW - 29 * DAY);
    expect(Math.max(...starts)).toBeGreaterThan(NOW - DAY);
    expect(Math.max(...records.map((r) => r.events.at(-1)!.timestamp))).toBeLessThanOrEqual(NOW);
  });

  it('populates every catalog field with varied values, and has classified failures', () => {
    const seen = new Map<string, Set<string>>();
    let failed = 0;
    const classes = new Set<string>();
    for (const r of records) {
      const d = deriveAttributes(r, r.events);
      for (const [k, v] of Object.entries(d.attributes)) {
        const s = seen.get(k) ?? new Set<string>();
        s.add(JSON.stringify(v));
        seen.set(k, s);
      }
      if (d.attributes['buildOutcome'] === 'failed') {
        failed++;
        const f = r.events.at(-1)!.data['failures'] as { classification: string }[];
        expect(f.length).toBeGreaterThan(0);
        for (const x of f) classes.add(x.classification);
      }
    }
    for (const f of FIELDS) {
      expect(seen.has(f.name), `field ${f.name} is never populated`).toBe(true);
      if (f.name !== 'buildTool' && !f.name.endsWith('Version') && f.type !== 'boolean') {
        expect(seen.get(f.name)!.size, `field ${f.name} has a single value`).toBeGreaterThan(1);
      }
    }
    expect(failed / records.length).toBeGreaterThan(0.05);
    expect(failed / records.length).toBeLessThan(0.4);
    expect(classes).toEqual(new Set(['verification', 'non-verification']));
  });

  it('gives builds that failed their tests failed tests with messages and stack traces, compile errors diagnostics, some builds console output', () => {
    let verification = 0;
    let withConsole = 0;
    let diagnostics = 0;
    for (const r of records) {
      const types = r.events.map((e) => e.type.eventType);
      if (types.includes('ConsoleOutput')) withConsole++;
      const finished = r.events.at(-1)!.data['failures'] as { classification: string; message?: string; cause?: { diagnostics?: unknown[] } }[];
      if (finished.some((f) => (f.cause?.diagnostics?.length ?? 0) > 0)) diagnostics++;
      // Lint and style failures are verification failures too; a build that failed its tests says so.
      if (!finished.some((f) => f.classification === 'verification' && /failing tests|Assertion failed/.test(f.message ?? ''))) continue;
      verification++;
      const failed = r.events.filter((e) => e.type.eventType === 'TestFinished' && e.data['outcome'] === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      for (const f of failed) expect(f.data['failure']).toMatchObject({ message: expect.any(String), stackTrace: expect.stringContaining('\tat ') });
      expect(deriveAttributes(r, r.events).attributes['hasFailedTest']).toBe(true);
    }
    expect(verification).toBeGreaterThan(20);
    expect(diagnostics).toBeGreaterThan(5);
    expect(withConsole / records.length).toBeGreaterThan(0.2);
    expect(withConsole / records.length).toBeLessThan(0.6);
  });

  it('gives the tests a history: a passing build has no failed test, flaky ones pass on a retry, one fails only on Windows, one is broken from a day on', () => {
    const runs = records.map((r) => ({ r, runs: testRunsOf(r.events), attributes: deriveAttributes(r, r.events).attributes }));
    let retried = 0;
    for (const { r, runs: rs, attributes } of runs) {
      const last = new Map<string, number>();
      for (const [suite, name, , outcome, attempt] of rs) {
        last.set(`${suite}.${name}`, outcome);
        if (attempt === 2 && outcome === TEST_OUTCOME_CODES.passed) retried++;
      }
      const failedAtLast = [...last.values()].filter((o) => o === TEST_OUTCOME_CODES.failed).length;
      if (attributes['buildOutcome'] === 'succeeded') expect(failedAtLast, r.buildId).toBe(0);
      const os = String((r.events.find((e) => e.type.eventType === 'Environment')?.data ?? {})['operatingSystem'] ?? '');
      const paths = rs.filter(([suite]) => suite === 'acme.io.PathsTest');
      if (!os.startsWith('Windows')) expect(paths.every(([, , , o]) => o === TEST_OUTCOME_CODES.passed), r.buildId).toBe(true);
      const broken = rs.filter(([, name]) => name === 'rejectsNegativeQuantity');
      const start = r.events[0]!.timestamp;
      // Broken from the middle of the month (the builds' places in it, give or take an hour).
      const at = (start - (NOW - 30 * DAY)) / (30 * DAY);
      if (at < 0.49) expect(broken.every(([, , , o]) => o === TEST_OUTCOME_CODES.passed), r.buildId).toBe(true);
      if (at > 0.51) expect(broken.every(([, , , o]) => o === TEST_OUTCOME_CODES.failed), r.buildId).toBe(true);
    }
    expect(retried).toBeGreaterThan(20);
    const windowsFailures = runs.flatMap(({ runs: rs }) => rs).filter(([suite, , , o]) => suite === 'acme.io.PathsTest' && o === TEST_OUTCOME_CODES.failed);
    expect(windowsFailures.length).toBeGreaterThan(3);
  });

  it('sends some builds unfinished only when asked', () => {
    const finished = (e: readonly BuildEvent[]): boolean => e.some((x) => x.type.eventType === 'BuildFinished');
    expect(records.every((r) => finished(r.events))).toBe(true);
    const some = [...demoBuilds({ builds: 200, seed: 9, now: NOW, unfinished: 0.3 })].map((l) => JSON.parse(l) as { events: BuildEvent[] });
    const open = some.filter((r) => !finished(r.events)).length;
    expect(open).toBeGreaterThan(20);
    expect(open).toBeLessThan(120);
  });
});
