// Random parameters, headers and bodies for every endpoint: never a 5xx, always a problem
// document for errors, and the server keeps serving.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { pgAvailable } from '../support/postgres.js';
import { bearer, buildId, buildLine, newLocation, startTestServer, type Dialect, type TestServer } from './support.js';

// Hundreds of real HTTP round trips per property: generous on a busy machine.
vi.setConfig({ testTimeout: 300_000 });

const QUERY_TOKENS = [
  'buildOutcome', 'buildOutcome:failed', ':', 'failed', '(', ')', ' and ', ' or ', 'not ', '-', '"', '*', '>', '>=', '<', '<=', '[', ' to ', ']',
  '2024-01-01', '2024-01-01T10:00', '-5d', 'PT1H', '1h30m', 'value:', 'a=b', '!', 'native.buildOptions.daemonEnabled', 'project:app*', ' ',
  '1kib', '10GB', 'true', 'false', 'null', '\\', '\u0000', 'é', '😀', "'; drop table builds; --", 'tag:ci', 'buildDuration>5m', 'user:*',
  'hasVerificationFailure', 'jvmbuild.environment.numberOfCpuCores>=4', '%', '_', '&', '=', '#', '?', '+',
];

const queryText = fc.oneof(
  fc.array(fc.constantFrom(...QUERY_TOKENS), { maxLength: 12 }).map((a) => a.join('')),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const paramValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom('', '0', '-1', '1001', '1e3', 'true', 'false', 'null', '[]', '{}', 'attributes', 'attributes,attributes', '9'.repeat(40), 'publishScan,bogus', 'a,,b'),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

function queryString(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

const LIST_KEYS = ['since', 'fromInstant', 'fromBuild', 'maxBuilds', 'query', 'models', 'unknownParam'];

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  const runs = Number(process.env.FUZZ_RUNS ?? (dialect === 'sqlite' ? 100 : 40));
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`fuzzing the API on ${dialect}`, () => {
    let s: TestServer;
    let key: string;
    let token: string;
    beforeAll(async () => {
      s = await startTestServer(await newLocation(dialect));
      key = await s.user('fuzzer', ['accessBuildDataViaApi', 'publishScan', 'readCache'], { projects: ['app', 'lib'] });
      token = await s.token(key);
      const lines = Array.from({ length: 20 }, (_, i) => buildLine({ id: buildId(i + 1), project: i % 2 ? 'app' : 'lib', outcome: i % 3 ? 'succeeded' : 'failed', tags: ['ci'] }));
      // Stored directly: a publisher restricted to projects may not choose build IDs (docs/store.md).
      const stored = await s.store.ingestNdjson(lines.join('\n'));
      expect(stored.every((r) => r.status === 'stored')).toBe(true);
    });
    afterAll(() => s?.close());

    async function check(r: Response): Promise<void> {
      const text = await r.text();
      expect(r.status, text).toBeLessThan(500);
      if (r.status >= 400) {
        expect(r.headers.get('content-type'), text).toMatch(/^application\/problem\+json/);
        const p = JSON.parse(text);
        expect(p.status).toBe(r.status);
        expect(typeof p.detail).toBe('string');
      }
    }

    it('GET /api/builds: random parameters and queries', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom(...LIST_KEYS), paramValue), { maxLength: 6 }),
          fc.option(queryText, { nil: undefined }),
          fc.constantFrom(key, token),
          async (pairs, query, credential) => {
            // reverse=true: a listing that finds nothing answers at once instead of long-polling.
            const all: [string, string][] = [...pairs, ['reverse', 'true']];
            if (query !== undefined) all.push(['query', query]);
            await check(await s.get(`/api/builds?${queryString(all)}`, bearer(credential)));
          },
        ),
        { numRuns: runs },
      );
    });

    it('GET /api/builds: long-poll parameters', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('1', '0', '21', '-1', 'x', '1.5', ''), fc.option(fc.constantFrom(buildId(20), 'nope', ''), { nil: undefined }), async (wait, from) => {
          const q: [string, string][] = [['maxWaitSecs', wait]];
          if (from !== undefined) q.push(['fromBuild', from]);
          await check(await s.get(`/api/builds?${queryString(q)}`, bearer(key)));
        }),
        { numRuns: 12 },
      );
    });

    it('GET /api/builds/{id}: random IDs and models', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ minLength: 1, maxLength: 80 }), fc.option(paramValue, { nil: undefined }), async (id, models) => {
          const path = `/api/builds/${encodeURIComponent(id)}${models !== undefined ? `?models=${encodeURIComponent(models)}` : ''}`;
          await check(await s.get(path, bearer(key)));
        }),
        { numRuns: runs },
      );
    });

    it('POST /api/auth/token: random parameters and bodies', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom('permissions', 'projectIds', 'expiresInHours', 'other'), paramValue), { maxLength: 6 }),
          fc.option(fc.string({ maxLength: 100 }), { nil: undefined }),
          fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
          async (pairs, body, type) => {
            const r = await fetch(`${s.url}/api/auth/token?${queryString(pairs)}`, {
              method: 'POST',
              headers: { authorization: bearer(key), ...(body !== undefined ? { 'content-type': type } : {}) },
              ...(body !== undefined ? { body } : {}),
            });
            await check(r);
          },
        ),
        { numRuns: runs },
      );
    });

    it('POST /api/builds: random NDJSON bodies', async () => {
      const event = fc.record({
        timestamp: fc.oneof(fc.integer(), fc.constant(1_749_000_000_000), fc.string()),
        type: fc.record({ majorVersion: fc.integer(), minorVersion: fc.integer(), eventType: fc.constantFrom('BuildStarted', 'BuildFinished', 'UserTag', 'ProjectStructure', 'X') }),
        data: fc.dictionary(fc.constantFrom('outcome', 'tag', 'rootProjectName', 'failures'), fc.jsonValue({ maxDepth: 2 })),
      });
      const line = fc.oneof(
        fc.record({ buildId: fc.oneof(fc.constant(buildId(500)), fc.stringMatching(/^[0-9a-z]{13}$/), fc.string()), toolType: fc.constantFrom('native', 'pybuild', 'nope'), toolVersion: fc.string(), agentVersion: fc.string(), events: fc.array(event, { maxLength: 4 }) }).map((o) => JSON.stringify(o)),
        fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
        fc.string({ maxLength: 80 }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(line, { maxLength: 5 }), async (lines) => {
          const r = await fetch(`${s.url}/api/builds`, {
            method: 'POST',
            headers: { authorization: bearer(key), 'content-type': 'application/x-ndjson' },
            body: lines.map((l) => l.replace(/\n/g, ' ')).join('\n'),
          });
          await check(r);
        }),
        { numRuns: runs },
      );
    });

    it('every endpoint: random Authorization headers, methods, paths and content types', async () => {
      const header = fc.oneof(
        fc.string({ maxLength: 60 }),
        fc.string({ maxLength: 60 }).map((x) => `Bearer ${x}`),
        fc.string({ maxLength: 60 }).map((x) => `Basic ${Buffer.from(x).toString('base64')}`),
        fc.string({ maxLength: 60 }).map((x) => `Bearer ${Buffer.from(x).toString('base64')}`),
        fc.constantFrom('Bearer a.b.c', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'Basic', 'Bearer', 'Basic ::::', `Bearer ${token}x`, `Bearer ${token.split('.').slice(0, 2).join('.')}.AAAA`),
      );
      const target = fc.constantFrom('/api/builds', '/api/builds/' + buildId(1), '/api/auth/token', '/api/version', '/api/openapi.json', '/api/builds/', '/api', '/%', '/api/builds/%ZZ');
      await fc.assert(
        fc.asyncProperty(header, target, fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'), fc.option(fc.string({ maxLength: 50 }), { nil: undefined }), async (h, path, method, body) => {
          const sep = path.includes('?') ? '&' : '?';
          const r = await fetch(`${s.url}${path}${path === '/api/builds' ? `${sep}reverse=true` : ''}`, {
            method,
            headers: { authorization: h.replace(/[\r\n\0]/g, ' ').replace(/[^\x20-\x7e]/g, '?'), ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { 'content-type': 'application/json' } : {}) },
            ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
          });
          if (method === 'HEAD') expect(r.status).toBeLessThan(500);
          else await check(r);
        }),
        { numRuns: runs },
      );
      // Still serving.
      expect((await fetch(`${s.url}/api/version`)).status).toBe(200);
    });
  });
}
