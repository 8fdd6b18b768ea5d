// The one error handler of the fastify faces (answerError): every kind of domain error is answered
// with its status and problem type, its detail, extensions and Retry-After; the provenance routes'
// `about:blank`; fastify's own errors; and an unexpected error is a 500 that tells nothing of it.
// Over real HTTP on loopback, with the handler installed as buildApp installs it.

import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerError } from '../../src/http/app.js';
import { DOMAIN_ERROR_KINDS, DomainError, ExternalServiceError, type DomainErrorKind } from '../../src/errors/domain.js';
import { PROBLEM_KINDS } from '../../src/errors/problem.js';
import { InvalidQueryError } from '../../src/errors/query.js';
import { parseQuery } from '../../src/query/index.js';

// The published contract, written out here rather than read from answerOf: a change to the table
// in src/errors/domain.ts must show up as a failing test.
const EXPECTED: Record<DomainErrorKind, readonly [number, string]> = {
  'bad-request': [400, 'urn:buildscope:problem:bad-request'],
  'invalid-parameter': [400, 'urn:buildscope:problem:invalid-parameter'],
  'invalid-query': [400, 'urn:buildscope:problem:invalid-query'],
  forbidden: [403, 'urn:buildscope:problem:forbidden'],
  'not-found': [404, 'urn:buildscope:problem:not-found'],
  'build-deleted': [404, 'urn:buildscope:problem:build-deleted'],
  'too-large': [413, 'urn:buildscope:problem:payload-too-large'],
  'unsupported-media-type': [415, 'urn:buildscope:problem:unsupported-media-type'],
  'too-many': [429, 'urn:buildscope:problem:too-many-requests'],
  'not-ready': [503, 'urn:buildscope:problem:build-not-ready'],
  unavailable: [503, 'urn:buildscope:problem:unavailable'],
  'insufficient-storage': [507, 'urn:buildscope:problem:insufficient-storage'],
  external: [500, 'urn:buildscope:problem:unexpected-error'],
};

class KindError extends DomainError {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    options = {},
  ) {
    super(message, options);
  }
}

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = Fastify();
  app.setErrorHandler(answerError);
  app.get<{ Params: { kind: DomainErrorKind } }>('/kind/:kind', async (request) => {
    throw new KindError(request.params.kind, `detail of ${request.params.kind}`, { extensions: { extra: 42 } });
  });
  app.get('/external', async () => {
    throw new ExternalServiceError('object store obj:main: disk gone');
  });
  app.get('/retry', async () => {
    throw new KindError('too-many', 'busy', { retryAfterSeconds: 7 });
  });
  app.get('/blank', { config: { problemType: 'about:blank' } }, async () => {
    throw new KindError('forbidden', 'no');
  });
  app.get('/query', async () => {
    const text = 'buildOutcom:failed';
    const parsed = parseQuery(text, { now: 0 });
    throw new InvalidQueryError(text, parsed.diagnostics);
  });
  app.get('/secret', async () => {
    throw new Error('password=hunter2 at /var/lib/buildscope');
  });
  app.get('/validated', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer', maximum: 5 } } } } }, async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(() => app?.close());

const get = async (path: string) => {
  const r = await fetch(`${base}${path}`);
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> };
};

describe('the error handler', () => {
  it('knows every kind: the list is the union, and each maps to a published problem kind', () => {
    expect([...DOMAIN_ERROR_KINDS].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [, type] of Object.values(EXPECTED)) expect(PROBLEM_KINDS).toContain(type.slice('urn:buildscope:problem:'.length));
  });

  for (const kind of Object.keys(EXPECTED) as DomainErrorKind[]) {
    it(`answers a ${kind} error with its status and problem document`, async () => {
      const [status, type] = EXPECTED[kind];
      const r = await get(`/kind/${kind}`);
      expect(r.status).toBe(status);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toEqual({ type, title: STATUS_CODES[status], status, detail: `detail of ${kind}`, extra: 42 });
    });
  }

  it('says which external service failed, in the provenance seed\'s words', async () => {
    const r = await get('/external');
    expect(r.status).toBe(500);
    expect(r.body['detail']).toBe('An error occurred while trying to communicate with an external service: object store obj:main: disk gone');
  });

  it('sends Retry-After when the error names it', async () => {
    const r = await get('/retry');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
  });

  it('gives the provenance routes type about:blank, with the same status and detail', async () => {
    const r = await get('/blank');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'no' });
  });

  it('words a query with diagnostics once: position, message, suggestion, and every diagnostic', async () => {
    const r = await get('/query');
    expect(r.status).toBe(400);
    expect(r.body['type']).toBe('urn:buildscope:problem:invalid-query');
    expect(r.body['detail']).toMatch(/^Invalid query at line 1, column 1 \(offset 0\): .*buildOutcome/);
    expect(r.body['query']).toBe('buildOutcom:failed');
    expect(Array.isArray(r.body['diagnostics']) && (r.body['diagnostics'] as unknown[]).length).toBeGreaterThan(0);
  });

  it('answers an unexpected error 500 without its message', async () => {
    const r = await get('/secret');
    expect(r.status).toBe(500);
    expect(r.body['type']).toBe('urn:buildscope:problem:unexpected-error');
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
  });

  it('answers a schema violation 400 invalid-parameter naming the path', async () => {
    const r = await get('/validated?n=9');
    expect(r.status).toBe(400);
    expect(r.body['type']).toBe('urn:buildscope:problem:invalid-parameter');
    expect((r.body['errors'] as { path: string }[])[0]?.path).toBe('querystring/n');
  });
});
