// GET /api/search/values and the store's fieldValues on SQLite and PostgreSQL: the most frequent
// values of a String field with a prefix, counted over the builds the caller may see only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { SCAN_ROWS } from '../../src/store/search/field-values.js';
import { pgAvailable } from '../support/postgres.js';
import { bearer, buildId, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`values seen in the data on ${dialect}`, () => {
    let s: TestServer;
    let admin: string;
    let billingOnly: string;
    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      admin = await s.user('admin', ['accessBuildDataViaApi', 'publishScan']);
      billingOnly = await s.user('bill', ['accessBuildDataViaApi'], { projects: ['billing'] });
      // billing: users ann x3, andy x1, tags Nightly x2, ci x4; secret: user anna-secret, tag nightly-secret.
      const lines = [
        buildLine({ id: buildId(1), project: 'billing', user: 'ann', tags: ['Nightly', 'ci'] }),
        buildLine({ id: buildId(2), project: 'billing', user: 'ann', tags: ['Nightly', 'ci'] }),
        buildLine({ id: buildId(3), project: 'billing', user: 'ann', tags: ['ci'] }),
        buildLine({ id: buildId(4), project: 'billing', user: 'andy', tags: ['ci'] }),
        buildLine({ id: buildId(5), project: 'secret', user: 'anna-secret', tags: ['nightly-secret'] }),
        buildLine({ id: buildId(6), project: 'secret', user: 'anna-secret', tags: ['nightly-secret'] }),
        buildLine({ id: buildId(7), tool: 'jvmbuild', project: 'Billing-Web', user: 'bob' }),
      ];
      expect((await s.ingest(lines, bearer(admin))).status).toBe(200);
    });
    afterAll(() => s?.close());

    const values = async (query: string, key = admin) => {
      const r = await s.get(`/api/search/values?${query}`, bearer(key));
      return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.json()) as any };
    };

    it('lists the most frequent values with a prefix, lower-cased, with counts', async () => {
      expect((await values('field=user&prefix=an')).body).toEqual({
        field: 'user',
        values: [
          { value: 'ann', count: 3 },
          { value: 'anna-secret', count: 2 },
          { value: 'andy', count: 1 },
        ],
      });
      expect((await values('field=USER&prefix=AN&limit=1')).body.values).toEqual([{ value: 'ann', count: 3 }]);
      expect((await values('field=project')).body.values).toEqual([
        { value: 'billing', count: 4 },
        { value: 'secret', count: 2 },
        { value: 'billing-web', count: 1 },
      ]);
    });

    it('lists values of multi-valued fields', async () => {
      expect((await values('field=tag&prefix=n')).body.values).toEqual([
        { value: 'nightly', count: 2 },
        { value: 'nightly-secret', count: 2 },
      ]);
      expect((await values('field=requested&prefix=zz')).body.values).toEqual([]);
    });

    it('counts only the builds the caller may see', async () => {
      expect((await values('field=user&prefix=an', billingOnly)).body.values).toEqual([
        { value: 'ann', count: 3 },
        { value: 'andy', count: 1 },
      ]);
      expect((await values('field=tag', billingOnly)).body.values).toEqual([
        { value: 'ci', count: 4 },
        { value: 'nightly', count: 2 },
      ]);
      expect((await values('field=project', billingOnly)).body.values).toEqual([{ value: 'billing', count: 4 }]);
    });

    it('refuses other fields with a problem document', async () => {
      const unknown = await values('field=usr');
      expect(unknown.status).toBe(400);
      expect(unknown.type).toMatch(/^application\/problem\+json/);
      expect(unknown.body.detail).toMatch(/Unknown field "usr"; did you mean 'user'\?/);
      for (const f of ['buildOutcome', 'buildDuration', 'value']) {
        const r = await values(`field=${f}`);
        expect(r.status, f).toBe(400);
        expect(r.body.detail, f).toMatch(/String fields without a fixed set of values/);
      }
      expect((await values('prefix=a')).status).toBe(400);
      expect((await values('field=user&limit=0')).status).toBe(400);
      expect((await s.get('/api/search/values?field=user')).status).toBe(401);
    });

    it('reads a bounded number of index entries', async () => {
      expect(SCAN_ROWS).toBeLessThanOrEqual(20_000);
      await expect(s.store.fieldValues('buildOutcome', { visibility: SEE_EVERYTHING })).rejects.toBeInstanceOf(RangeError);
    });
  });
}
