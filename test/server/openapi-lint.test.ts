// The committed OpenAPI document as its clients' tools read it: `@redocly/cli lint` (recommended
// rules, run offline from node_modules) reports no errors, and every operation has an
// operationId, its 4xx answers with problem+json, its real content types and request bodies, and
// its real security.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../src/http/openapi.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, any>> };
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([m]) => ['get', 'put', 'post', 'delete', 'patch'].includes(m))
    .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op })),
);
const op = (method: string, path: string) => doc.paths[path]![method]!;

describe('OpenAPI document for generated clients', () => {
  it('passes @redocly/cli lint with no errors', { timeout: 120_000 }, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url)), 'lint', OPENAPI_FILE, '--format=json'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: { errors: number }; problems: { severity: string; message: string }[] };
    expect(report.problems.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('gives every operation a unique operationId', () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(operations.filter((o) => typeof o.op.operationId !== 'string').map((o) => o.key)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(op('get', '/api/builds').operationId).toBe('GetBuilds');
    expect(op('get', '/api/version').operationId).toBe('GetVersion');
  });

  it('lists the 4xx answers of every operation that has any, as problem+json', () => {
    // Public operations that cannot refuse a request.
    const noRefusal = new Set(['GET /api/version', 'GET /provenance/keys', 'GET /health/live', 'GET /health/ready']);
    for (const o of operations) {
      const fourxx = Object.keys(o.op.responses ?? {}).filter((s) => s.startsWith('4'));
      if (noRefusal.has(o.key)) continue;
      expect(fourxx.length, o.key).toBeGreaterThan(0);
      for (const s of fourxx) expect(o.op.responses[s].content?.['application/problem+json'], `${o.key} ${s}`).toBeDefined();
      if (o.op.security === undefined) expect(fourxx, `${o.key}: authenticated operations answer 401`).toContain('401');
    }
  });

  it('describes the export streams as text/event-stream with 204, 503 and their refusals', () => {
    for (const v of ['v1', 'v2']) {
      for (const p of [`/build-export/${v}/builds/since/{date}`, `/build-export/${v}/builds/sinceBuild/{buildId}`, `/build-export/${v}/build/{buildId}/events`]) {
        const o = op('get', p);
        expect(o.responses['200'].content['text/event-stream'], p).toBeDefined();
        for (const s of ['204', '400', '401', '403', '503']) expect(o.responses[s], `${p} ${s}`).toBeDefined();
      }
    }
    expect(op('get', '/build-export/v1/builds/since/{date}').deprecated).toBe(true);
  });

  it('describes NDJSON bodies and answers, and the provenance bodies in all three encodings', () => {
    expect(op('post', '/api/builds').requestBody.content['application/x-ndjson']).toBeDefined();
    for (const p of ['/packages/{type}/{namespace}/{name}/{version}/attestations', '/packages/{type}/{name}/{version}/attestations', '/packages/{type}/{namespace}/{name}/{version}/policy-scans/{scan}', '/packages/{type}/{name}/{version}/policy-scans/{scan}']) {
      const o = op('post', p);
      expect(Object.keys(o.requestBody.content).sort(), p).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
      expect(o.requestBody.content['application/json'].schema.required).toEqual(['sha256', 'repositoryUrl']);
      expect(o.responses['200'].content['application/x-ndjson'], p).toBeDefined();
    }
    expect(op('post', '/packages/{type}/{name}/{version}/policy-scans/{scan}').responses['429']).toBeDefined();
  });

  it('shows the real security: public keys and the node-status call need no Authorization header', () => {
    expect(op('get', '/provenance/keys').security).toEqual([]);
    expect(op('put', '/api/build-cache/node-status').security).toEqual([]);
    expect(op('put', '/api/build-cache/node-status').responses['401']).toBeDefined();
    expect(op('get', '/api/build-cache/nodes').security).toBeUndefined(); // the document's default: bearer or basic
    expect(op('get', '/api/version').security).toEqual([]);
  });
});
