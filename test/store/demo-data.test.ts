// Demo data: deterministic, all six tools, every catalog field populated, plausible shapes.

import { describe, expect, it } from 'vitest';
import { FIELDS, TOOL_TYPES } from '../../src/query/catalog.js';
import { deriveAttributes } from '../../src/store/derive.js';
import { demoBuilds } from '../../src/store/demo-data.js';
import type { BuildEvent } from '../../src/store/types.js';
import { validateRecord } from '../../src/store/validate.js';

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

  it('produces valid lines of all six tools with unique IDs and about 30 events', () => {
    expect(new Set(records.map((r) => r.toolType))).toEqual(new Set(TOOL_TYPES));
    expect(new Set(records.map((r) => r.buildId)).size).toBe(600);
    for (const r of records) {
      expect(r.events.length).toBeGreaterThanOrEqual(24);
      expect(r.events.length).toBeLessThanOrEqual(36);
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
      const finished = r.events.at(-1)!.data['failures'] as { classification: string; cause?: { diagnostics?: unknown[] } }[];
      if (finished.some((f) => (f.cause?.diagnostics?.length ?? 0) > 0)) diagnostics++;
      if (!finished.some((f) => f.classification === 'verification')) continue;
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

  it('sends some builds unfinished only when asked', () => {
    const finished = (e: readonly BuildEvent[]): boolean => e.some((x) => x.type.eventType === 'BuildFinished');
    expect(records.every((r) => finished(r.events))).toBe(true);
    const some = [...demoBuilds({ builds: 200, seed: 9, now: NOW, unfinished: 0.3 })].map((l) => JSON.parse(l) as { events: BuildEvent[] });
    const open = some.filter((r) => !finished(r.events)).length;
    expect(open).toBeGreaterThan(20);
    expect(open).toBeLessThan(120);
  });
});
