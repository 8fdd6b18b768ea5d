// SearchSlots: at most `size` searches run at a time; the others wait their turn within their
// time limit, and get SearchTimeoutError when it passes first.

import { describe, expect, it } from 'vitest';
import { SearchTimeoutError } from '../../src/store/search/read-pool.js';
import { SearchSlots } from '../../src/store/search/search-slots.js';

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('search slots', () => {
  it('runs at most `size` at a time and hands a slot on in order', async () => {
    const slots = new SearchSlots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const job = (i: number) =>
      slots.run(10_000, async () => {
        running++;
        most = Math.max(most, running);
        await later(30, undefined);
        running--;
        order.push(i);
        return i;
      });
    expect(await Promise.all([0, 1, 2, 3, 4].map(job))).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(order.slice(2).sort()).toEqual([2, 3, 4]);
  });

  it('gives a waiting search SearchTimeoutError when its limit passes first, and the time left to one that runs', async () => {
    const slots = new SearchSlots(1);
    let longDoneAt = 0;
    const long = slots.run(10_000, async () => {
      const r = await later(400, 'long');
      longDoneAt = Date.now();
      return r;
    });
    await expect(slots.run(50, async () => 'never')).rejects.toBeInstanceOf(SearchTimeoutError);
    let left = 0;
    const next = slots.run(5000, async (ms) => ((left = ms), 'next'));
    const queuedBy = Date.now();
    expect(await long).toBe('long');
    expect(await next).toBe('next');
    // It waited at least from its queueing to the long search's end: its time left is its limit
    // less that (not a fixed figure: on a loaded machine the rejection above may come late).
    expect(longDoneAt - queuedBy).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(5000 - (longDoneAt - queuedBy));
    expect(left).toBeGreaterThan(0);
  });

  it('frees the slot when a search fails', async () => {
    const slots = new SearchSlots(1);
    await expect(slots.run(1000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(1000, async () => 'ok')).toBe('ok');
  });
});
