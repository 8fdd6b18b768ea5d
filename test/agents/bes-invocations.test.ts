// The invocations the Build Event Service endpoint keeps on disk: the retry window on a clock of
// the test's own, the bounds, and the events read back in sequence order with re-sent ones once.

import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvocationSpool, type Invocation } from '../../src/bes/invocations.js';
import { bepToBuild, type BepEvent } from '../../src/bes/bep-build.js';
import { agentContract } from '../../src/agents/contract.js';

const limits = { maxInvocationBytes: 1024 * 1024, maxOpenInvocationsPerUser: 2, maxOpenInvocations: 3, retryWindowMs: 60_000 };
const started = (uuid: string) => ({ id: { started: {} }, started: { uuid, command: 'build' } });
const fileSet = { id: { namedSet: { id: '0' } }, namedSetOfFiles: { files: [{ name: 'x'.repeat(100_000) }] } };
const progress = (n: number): BepEvent => ({ id: { progress: { opaqueCount: n } }, progress: { stdout: `${n}`.padEnd(100_000, 'x') } });

function attached(spool: InvocationSpool, id: string, user: string): Invocation {
  const opened = spool.attach(id, user);
  if (!opened.ok) throw new Error(`refused: ${opened.refusal.kind}`);
  return opened.invocation;
}

describe('InvocationSpool', () => {
  it('keeps an invocation without streams for the retry window, then drops it and its file', () => {
    let now = 1_000;
    const spool = new InvocationSpool(limits, () => now);
    const inv = attached(spool, 'a', 'ci');
    expect(spool.add(inv, 1, started('a'), 5)).toBeUndefined();
    expect(statSync(inv.file).mode & 0o777).toBe(0o600);
    spool.detach(inv);
    now += 59_999;
    spool.sweep();
    expect(spool.stats().invocations).toBe(1);
    // Resumed within the window: no longer expiring while its stream is open.
    expect(attached(spool, 'a', 'ci')).toBe(inv);
    now += 10 * 60_000;
    spool.sweep();
    expect(spool.stats().invocations).toBe(1);
    spool.detach(inv);
    now += 60_000;
    spool.sweep();
    expect(spool.stats()).toEqual({ invocations: 0, bytes: 0 });
    expect(existsSync(inv.file)).toBe(false);
    spool.close();
  });

  it('refuses the invocations over the bounds of a user and of the endpoint, and other users on a known invocation', () => {
    const spool = new InvocationSpool(limits);
    attached(spool, 'a', 'ci');
    attached(spool, 'b', 'ci');
    expect(spool.attach('c', 'ci')).toEqual({ ok: false, refusal: { kind: 'tooManyOfUser', limit: 2 } });
    expect(spool.attach('a', 'other')).toEqual({ ok: false, refusal: { kind: 'otherUser' } });
    attached(spool, 'c', 'other');
    expect(spool.attach('d', 'third')).toEqual({ ok: false, refusal: { kind: 'tooMany', limit: 3 } });
    spool.close();
  });

  it('keeps only what the build is made of, within the bytes of an invocation', () => {
    const spool = new InvocationSpool({ ...limits, maxInvocationBytes: 64 * 1024 });
    const inv = attached(spool, 'a', 'ci');
    for (let i = 0; i < 100; i++) expect(spool.add(inv, i + 1, fileSet, undefined)).toBeUndefined();
    expect(spool.stats().bytes).toBe(0);
    let refused;
    for (let i = 0; refused === undefined && i < 1000; i++) refused = spool.add(inv, 200 + i, { id: { targetConfigured: { label: `//t:${i}-${'y'.repeat(1000)}` } }, configured: { targetKind: 'genrule rule' } }, undefined);
    expect(refused).toEqual({ kind: 'tooLarge', limit: 64 * 1024 });
    expect(spool.stats().bytes).toBeLessThanOrEqual(64 * 1024);
    spool.close();
  });

  it('keeps the console up to what the build shows of it, a re-sent event counted once, and no more', () => {
    const limit = agentContract().bounds.consoleChars;
    const spool = new InvocationSpool({ ...limits, maxInvocationBytes: 8 * 1024 * 1024 });
    const inv = attached(spool, 'a', 'ci');
    const sent: BepEvent[] = [
      { id: { started: {} }, started: { uuid: 'a', startTimeMillis: '1000' } },
      ...Array.from({ length: 100 }, (_, i) => progress(i)),
      { id: { buildFinished: {} }, finished: { finishTimeMillis: '2000', exitCode: { name: 'SUCCESS' } } },
    ];
    sent.forEach((e, i) => {
      expect(spool.add(inv, i + 1, e, undefined)).toBeUndefined();
      // Bazel re-sends what it did not see acknowledged: the same event, the same sequence number.
      if (i === 5) expect(spool.add(inv, i + 1, e, undefined)).toBeUndefined();
    });
    // 11 chunks of 100,000 characters are past 1 MiB; the 89 after them are not kept.
    expect(inv.consoleChars).toBe(1_100_000);
    expect(spool.stats().bytes).toBeGreaterThan(limit);
    // The file holds the re-sent copy too until it is read back: 12 chunks.
    expect(spool.stats().bytes).toBeLessThan(limit + 2 * 100_000 + 4096);
    const build = (events: BepEvent[]) => bepToBuild(events.map((event) => ({ event })), 'abcdefghijklm');
    const kept = spool.take(inv).map((e) => e.event);
    expect(build(kept)).toEqual(build(sent));
    const console = build(kept).events.filter((e) => e.type.eventType === 'ConsoleOutput');
    expect(console).toHaveLength(11);
    expect(console.at(-1)!.data['truncated']).toBe(true);
    spool.close();
  });

  it('reads the events back in sequence order, a re-sent sequence number once (its last copy)', () => {
    const spool = new InvocationSpool(limits);
    const inv = attached(spool, 'a', 'ci');
    spool.add(inv, 2, { id: { buildMetadata: {} }, buildMetadata: { metadata: { ROLE: 'first' } } }, 20);
    spool.add(inv, 1, started('a'), 10);
    spool.add(inv, 2, { id: { buildMetadata: {} }, buildMetadata: { metadata: { ROLE: 'again' } } }, 21);
    const events = spool.take(inv);
    expect(events.map((e) => e.time)).toEqual([10, 21]);
    expect(events[1]!.event['buildMetadata']).toEqual({ metadata: { ROLE: 'again' } });
    expect(spool.stats().invocations).toBe(0);
    expect(existsSync(inv.file)).toBe(false);
    spool.close();
  });
});
