// The playground face over HTTP: the static page with its headers, the explain endpoint and its
// errors, the configuration section. Real server on 127.0.0.1, real bundle.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { explainSql } from '../../src/sql/index.js';
import { DEFAULT_PLAYGROUND_ROOT, MAX_EXPLAIN_QUERY_LENGTH, astToJson, parsePlaygroundConfig, playgroundUrl } from '../../src/http/playground-plugin.js';
import { buildBundle, startServer, type TestServer } from './harness.js';

describe('playground configuration section', () => {
  it('defaults to enabled, serving dist/playground', () => {
    expect(parsePlaygroundConfig(undefined)).toEqual({ enabled: true, root: DEFAULT_PLAYGROUND_ROOT });
    expect(parsePlaygroundConfig({ enabled: false }).enabled).toBe(false);
    expect(parsePlaygroundConfig({ root: '/srv/page' }).root).toBe('/srv/page');
  });

  it('rejects what it does not know, with the setting named', () => {
    expect(() => parsePlaygroundConfig('yes')).toThrow(/playground: must be an object/);
    expect(() => parsePlaygroundConfig({ enable: true })).toThrow(/playground\.enable: unknown property \(did you mean "enabled"\?\)/);
    expect(() => parsePlaygroundConfig({ enabled: 'yes' })).toThrow(/playground\.enabled: must be boolean/);
    expect(() => parsePlaygroundConfig({ root: '' })).toThrow(/playground.root/);
  });
});

describe('playground address', () => {
  it('names the first IPv4 listening address, a wildcard one as localhost', () => {
    expect(playgroundUrl([{ address: '127.0.0.1', family: 'IPv4', port: 5080 }])).toBe('http://127.0.0.1:5080/playground/');
    expect(playgroundUrl([{ address: '::1', family: 'IPv6', port: 1 }, { address: '0.0.0.0', family: 'IPv4', port: 2 }])).toBe('http://localhost:2/playground/');
    expect(playgroundUrl([{ address: '::1', family: 'IPv6', port: 3 }])).toBe('http://[::1]:3/playground/');
  });
});

describe('playground face over HTTP', () => {
  let server: TestServer;
  let bundle: string;

  beforeAll(async () => {
    bundle = await buildBundle();
    server = await startServer(bundle, { builds: 12 });
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    if (bundle) await rm(bundle, { recursive: true, force: true });
  });

  const get = (path: string, init?: RequestInit) => fetch(`${server.base}${path}`, { redirect: 'manual', ...init });

  it('serves the page under /playground/ with a same-origin-only content security policy', async () => {
    const redirect = await get('/playground');
    expect([301, 302]).toContain(redirect.status);
    expect(redirect.headers.get('location')).toBe('/playground/');

    const page = await get('/playground/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    // Nothing from elsewhere: no absolute URLs to other hosts in the page or its bundle.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

    const js = await get('/playground/app.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const css = await get('/playground/app.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).not.toMatch(/@import|url\(\s*['"]?https?:/);

    const missing = await get('/playground/nope.js');
    expect(missing.status).toBe(404);
  });

  it('explains a valid query: diagnostics, checked tree and SQL for both dialects', async () => {
    const query = 'buildOutcome:failed buildDuration>5m -tag:CI';
    const res = await get(`/api/query/explain?query=${encodeURIComponent(query)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, any>;
    const parsed = parseQuery(query);
    expect(body['ok']).toBe(true);
    expect(body['diagnostics']).toEqual([]);
    expect(body['ast']).toEqual(JSON.parse(JSON.stringify(astToJson(parsed.expr!))));
    expect(body['ast'].kind).toBe('and');
    expect(body['ast'].operands[0].field).toEqual({ name: 'buildOutcome', type: 'string', tool: null, multi: false });
    expect(body['sql'].sqlite).toEqual(JSON.parse(JSON.stringify(explainSql(parsed.expr!, 'sqlite'))));
    expect(body['sql'].postgres).toEqual(JSON.parse(JSON.stringify(explainSql(parsed.expr!, 'postgres'))));
    expect(body['sql'].postgres.sql).toMatch(/\$1/);
  });

  it('answers a query with problems with every diagnostic and no tree or SQL', async () => {
    const query = 'buildOutcom:failed tag>x (';
    const res = await get(`/api/query/explain?query=${encodeURIComponent(query)}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; diagnostics: { code: string; start: number; end: number; message: string }[]; ast: unknown; sql: unknown };
    expect(body.ok).toBe(false);
    expect(body.ast).toBeNull();
    expect(body.sql).toBeNull();
    expect(body.diagnostics).toEqual(JSON.parse(JSON.stringify(parseQuery(query).diagnostics)));
    expect(body.diagnostics.length).toBeGreaterThanOrEqual(3);
    expect(body.diagnostics.map((d) => d.code)).toContain('unknownField');
  });

  it('answers any query text with 200 and the parser\'s own verdict, never an error', async () => {
    const pieces = ['buildOutcome', ':', 'failed', '(', ')', ' or ', ' and ', 'not ', '-', '!', '"', '*', '>=', '[', ' to ', ']', '5m', '-7d', 'é', '\\', ' '];
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.array(fc.constantFrom(...pieces), { maxLength: 10 }).map((a) => a.join('')), fc.string({ maxLength: 40 })), async (query) => {
        const res = await server.app.inject({ method: 'GET', url: '/api/query/explain', query: { query } });
        expect(res.statusCode).toBe(200);
        const body = res.json() as { ok: boolean; diagnostics: unknown[]; sql: unknown };
        const parsed = parseQuery(query);
        expect(body.ok).toBe(parsed.ok);
        expect(body.diagnostics).toHaveLength(parsed.diagnostics.length);
        expect(body.sql === null).toBe(!parsed.ok);
      }),
      { numRuns: 150 },
    );
  });

  it('explains the empty query as every build', async () => {
    const body = (await (await get('/api/query/explain?query=')).json()) as { ok: boolean; ast: { kind: string } };
    expect(body.ok).toBe(true);
    expect(body.ast.kind).toBe('all');
  });

  it('needs no credentials, and rejects bad requests with problem documents', async () => {
    const missing = await get('/api/query/explain');
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await missing.json()) as { detail: string }).detail).toMatch(/query/);

    const twice = await get('/api/query/explain?query=a&query=b');
    expect(twice.status).toBe(400);
    expect(twice.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const long = await get(`/api/query/explain?query=${'a'.repeat(MAX_EXPLAIN_QUERY_LENGTH + 1)}`);
    expect(long.status).toBe(400);
    const problem = (await long.json()) as { type: string; title: string; status: number; detail: string };
    expect(problem).toMatchObject({ type: 'urn:buildscope:problem:bad-request', title: 'Bad Request', status: 400 });
    expect(problem.detail).toContain(`at most ${MAX_EXPLAIN_QUERY_LENGTH}`);
  });
});

describe('playground face without a built page', () => {
  it('answers 503 with how to build it, and still explains queries', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'buildscope-playground-empty-'));
    const server = await startServer(empty, { builds: 0 });
    try {
      const res = await fetch(`${server.base}/playground/`);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { detail: string }).detail).toContain('npm run build');
      expect((await fetch(`${server.base}/api/query/explain?query=tag:x`)).status).toBe(200);
    } finally {
      await server.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
