// The committed OpenAPI document matches the route schemas; deprecation headers follow the schema.

import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { formatOpenApi, generateOpenApi, OPENAPI_FILE } from '../../src/http/openapi.js';
import type { FacePlugin } from '../../src/http/app.js';
import { newLocation, startTestServer } from './support.js';

// Generating the document builds the whole application with every face.
vi.setConfig({ testTimeout: 180_000 });

describe('OpenAPI document', () => {
  it('docs/openapi.json is up to date (regenerate: node --import tsx src/http/openapi.ts --write)', async () => {
    const doc = await generateOpenApi();
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(formatOpenApi(doc));
  });

  it('describes the REST API with parameters, problem responses and security schemes', async () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(doc.openapi).toMatch(/^3\./);
    const list = doc.paths['/api/builds'].get;
    const names = list.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual(['fromBuild', 'fromInstant', 'maxBuilds', 'maxWaitSecs', 'models', 'query', 'reverse', 'since', 'sinceBuild']);
    expect(list.responses['403'].content['application/problem+json']).toBeDefined();
    const token = doc.paths['/api/auth/token'].post;
    expect(token.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['expiresInHours', 'permissions', 'projectIds']);
    expect(token.responses['200'].content['text/plain']).toBeDefined();
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/builds'].post.requestBody.content['application/x-ndjson']).toBeDefined();
  });

  it('is served at /api/openapi.json, and deprecated operations answer Deprecated and Sunset headers', async () => {
    const legacy: FacePlugin = async (app) => {
      app.get('/api/legacy', { schema: { deprecated: true }, config: { deprecatedAt: '2026-01-01T00:00:00Z', sunset: '2027-01-01T00:00:00Z' } }, async () => ({ ok: true }));
      app.get('/api/current', async () => ({ ok: true }));
    };
    const s = await startTestServer(await newLocation('sqlite'), { plugins: [legacy] });
    try {
      const served = (await (await fetch(`${s.url}/api/openapi.json`)).json()) as any;
      expect(served.paths['/api/legacy'].get.deprecated).toBe(true);
      const r = await fetch(`${s.url}/api/legacy`);
      expect(r.headers.get('deprecated')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
      expect(r.headers.get('sunset')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
      const c = await fetch(`${s.url}/api/current`);
      expect(c.headers.get('deprecated')).toBeNull();
      expect(c.headers.get('sunset')).toBeNull();
    } finally {
      await s.close();
    }
  });
});
