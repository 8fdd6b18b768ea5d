// A build ID with a NUL character names no build, on both databases (PostgreSQL's text cannot
// hold NUL: such a lookup was a database error, and a 500 over HTTP).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnknownBuildError } from '../../src/store/build-store.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { pgAvailable } from '../support/postgres.js';
import { openTestStore, type TestStore } from './support.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`IDs with NUL on ${dialect}`, () => {
    let t: TestStore;
    beforeAll(async () => {
      t = await openTestStore(dialect);
    });
    afterAll(() => t?.close());

    it('are builds that do not exist: by ID, state, events and as a listing start', async () => {
      for (const id of ['a\u0000b', '\u0000', 'b00000000000\u0000']) {
        expect(await t.store.getBuild(id, SEE_EVERYTHING)).toBeUndefined();
        expect(await t.store.buildState(id, SEE_EVERYTHING)).toBe('missing');
        const events: unknown[] = [];
        for await (const e of t.store.streamEvents(id)) events.push(e);
        expect(events).toEqual([]);
        await expect(t.store.listBuilds({ visibility: SEE_EVERYTHING, fromBuild: id, maxBuilds: 10 })).rejects.toBeInstanceOf(UnknownBuildError);
      }
    });
  });
}
