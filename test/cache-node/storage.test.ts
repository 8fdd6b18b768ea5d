// The disk store against a model: least-recently-used eviction to a byte budget (property).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DiskStore } from '../../src/cache-node/storage.js';

type Op = { kind: 'put'; key: string; size: number } | { kind: 'get'; key: string };

async function write(store: DiskStore, key: string, size: number): Promise<void> {
  const { tmpPath, stream } = store.beginWrite();
  await new Promise<void>((resolve, reject) => stream.end(Buffer.alloc(size, 1), () => resolve()).once('error', reject));
  await store.commit(key, tmpPath, size);
  await store.scheduleEviction();
}

describe('DiskStore', () => {
  it('keeps exactly what an LRU model with the same budget keeps, across a restart (property)', async () => {
    const budget = 1000;
    const key = fc.constantFrom('a1', 'b2', 'c3', 'd4', 'e5', 'f6');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), key, size: fc.integer({ min: 0, max: 600 }) }),
      fc.record({ kind: fc.constant('get' as const), key }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const dir = mkdtempSync(join(tmpdir(), 'cache-node-store-'));
        let now = 1_700_000_000_000;
        try {
          const store = await DiskStore.open(dir, { clock: () => (now += 1000) });
          store.setLimits({ maxEntryAgeMs: null, targetBytes: async () => budget });
          const model = new Map<string, number>(); // insertion order = LRU order
          for (const o of ops) {
            if (o.kind === 'put') {
              await write(store, o.key, o.size);
              model.delete(o.key);
              model.set(o.key, o.size);
              let total = [...model.values()].reduce((a, b) => a + b, 0);
              for (const k of model.keys()) {
                if (total <= budget) break;
                total -= model.get(k)!;
                model.delete(k);
              }
            } else {
              const info = store.lookup(o.key);
              expect(info !== undefined).toBe(model.has(o.key));
              if (info) {
                store.touch(o.key, info);
                const size = model.get(o.key)!;
                model.delete(o.key);
                model.set(o.key, size);
              }
            }
            expect(store.recent(100).map((e) => e.key).reverse()).toEqual([...model.keys()]);
            expect(store.bytes).toBe([...model.values()].reduce((a, b) => a + b, 0));
          }
          await store.flushAccessTimes();
          const reopened = await DiskStore.open(dir);
          expect(reopened.recent(100).map((e) => e.key).reverse()).toEqual([...model.keys()]);
          expect(reopened.bytes).toBe(store.bytes);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  });
});
