// Fuzzing generated from the committed OpenAPI document: every operation, hostile values for
// every parameter, malformed and oversized bodies of every content type, on SQLite and
// PostgreSQL. 0 5xx, 0 hangs, every 4xx a problem document, every JSON 2xx valid JSON.
// FUZZ_RUNS=N sets the runs per operation (default: a short run).

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { pgAvailable } from '../support/postgres.js';
import { bodiesFor, encodeValue, HOSTILE, formatTally, headerSafe, hostileValue, loadOperations, newTally, probe, type Operation, type WireValue } from './openapi-fuzz.js';
import { BODY_LIMIT, startFuzzServer, type FuzzServer } from './fuzz-server.js';

vi.setConfig({ testTimeout: 900_000, hookTimeout: 120_000 });

const OPERATIONS = loadOperations();

/**
 * 5xx the sweep below finds that are open in the reliability issue (item 6: `since` and
 * `fromInstant` of Infinity, 1e400 or more than 2^53 pass the route's schema and the store refuses
 * them with an error). Reported by every run, not failed; delete an entry once its fix is in, and
 * the sweep holds it fixed.
 */
const TIMEOUT_MS = Number(process.env.FUZZ_TIMEOUT_MS ?? 20_000);

function valueFor(f: FuzzServer, name: string): fc.Arbitrary<WireValue> {
  const plausible = f.plausible[name];
  if (plausible === undefined) return hostileValue;
  return fc.oneof(hostileValue, fc.constantFrom(...plausible).map((text) => ({ text })));
}

/** One request for `op`: its path, query and headers filled with generated values, and a body. */
function requestFor(f: FuzzServer, op: Operation) {
  const params = op.parameters.map((p) =>
    p.in === 'path'
      ? valueFor(f, p.name).map((v) => ({ p, values: [v] }))
      : fc.option(fc.array(valueFor(f, p.name), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 2 }).map((values) => ({ p, values: values ?? [] })),
  );
  return fc.record({
    params: fc.tuple(...params),
    extra: fc.option(fc.tuple(fc.constantFrom('unknown', '__proto__', 'constructor', ''), hostileValue), { nil: undefined, freq: 4 }),
    credential: fc.constantFrom(...f.credentials),
    body: bodiesFor(op, BODY_LIMIT),
  });
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  const runs = Number(process.env.FUZZ_RUNS ?? (dialect === 'sqlite' ? 12 : 6));
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`OpenAPI fuzzing on ${dialect}`, () => {
    let f: FuzzServer;
    const tally = newTally();
    beforeAll(async () => {
      f = await startFuzzServer(dialect);
    });
    afterAll(async () => {
      console.log(formatTally(`OpenAPI fuzz on ${dialect} (${runs} runs per operation)`, tally));
      await f?.close();
    });

    it('the document lists the operations of every face', () => {
      const paths = new Set(OPERATIONS.map((o) => `${o.method} ${o.path}`));
      for (const known of ['GET /api/builds', 'POST /api/builds', 'GET /build-export/v2/build/{buildId}/events', 'PUT /api/build-cache/node-status', 'POST /packages/{type}/{name}/{version}/attestations']) {
        expect(paths).toContain(known);
      }
    });

    for (const op of OPERATIONS) {
      const name = `${op.method} ${op.path}`;
      it(name, async () => {
        await fc.assert(
          fc.asyncProperty(requestFor(f, op), async ({ params, extra, credential, body }) => {
            let path = op.path;
            const query: string[] = [];
            const headers: Record<string, string> = {};
            for (const { p, values } of params) {
              for (const v of values) {
                if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeValue(v));
                else if (p.in === 'query') query.push(`${encodeURIComponent(p.name)}=${encodeValue(v)}`);
                else headers[p.name] = headerSafe(v.text);
              }
            }
            if (extra !== undefined) query.push(`${encodeURIComponent(extra[0])}=${encodeValue(extra[1])}`);
            if (credential !== undefined) headers.authorization = credential;
            if (body?.type !== undefined) headers['content-type'] = body.type;
            const url = `${f.server.url}${path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
            const verdict = await probe(url, { method: op.method, headers, ...(body !== undefined ? { body: body.body } : {}) }, tally, name, TIMEOUT_MS);
            if (!verdict.ok) throw new Error(`${op.method} ${url.slice(0, 400)} (${body?.type ?? 'no body'}, ${String(body?.body.length ?? 0)} bytes): ${verdict.why}`);
          }),
          { numRuns: runs },
        );
      });
    }

    it('every hostile value in every parameter of every operation, the others plausible', async () => {
      // Deterministic, next to the random runs: each listed value once in each parameter.
      const failures: string[] = [];
      for (const op of OPERATIONS) {
        for (const target of op.parameters) {
          for (const value of HOSTILE) {
            let path = op.path;
            const query: string[] = [];
            const headers: Record<string, string> = { authorization: f.credentials[0]! };
            for (const p of op.parameters) {
              const text = p === target ? value : f.plausible[p.name]?.[0];
              if (text === undefined) continue;
              if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(text));
              else if (p.in === 'query') query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(text)}`);
              else headers[p.name] = headerSafe(text);
            }
            if (path.includes('{')) continue;
            const url = `${f.server.url}${path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
            const verdict = await probe(url, { method: op.method, headers }, tally, `${op.method} ${op.path}`, TIMEOUT_MS);
            if (verdict.ok) continue;
            const line = `${op.method} ${url.slice(f.server.url.length)}`;
            failures.push(`${line.slice(0, 300)}: ${verdict.why.slice(0, 200)}`);
          }
        }
      }
      expect(failures).toEqual([]);
    });

    it('still serves afterwards, and found no 5xx and no hang', async () => {
      expect((await fetch(`${f.server.url}/api/version`)).status).toBe(200);
      expect(tally.requests).toBeGreaterThan(OPERATIONS.length);
      expect({ serverErrors: tally.serverErrors, hangs: tally.hangs }).toEqual({ serverErrors: 0, hangs: 0 });
    });
  });
}
