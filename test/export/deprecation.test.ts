// Version 1 of the export API is deprecated: every answer of it carries the Deprecated header
// (seed 002 versioning rules), the 200 streams included; version 2 answers never do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { V1_DEPRECATED_AT } from '../../src/http/export-plugin.js';
import { rawGet, startServer, type TestServer } from './harness.js';

describe('Deprecated header of the v1 export API', { timeout: 60_000 }, () => {
  let s: TestServer;
  let nativeId: string;
  beforeAll(async () => {
    s = await startServer();
    const lines = [...demoBuilds({ builds: 12, seed: 31 })];
    await s.store.ingestNdjson(lines.join('\n'));
    nativeId = lines.map((l) => JSON.parse(l) as { buildId: string; toolType: string }).find((b) => b.toolType === 'native')!.buildId;
  });
  afterAll(() => s?.close());

  const cases = (v: 1 | 2): [string, string, Record<string, string>, number][] => [
    ['listing', `/build-export/v${v}/builds/since/0`, { Authorization: s.bearer }, 200],
    ['gzip listing', `/build-export/v${v}/builds/since/0`, { Authorization: s.bearer, 'Accept-Encoding': 'gzip' }, 200],
    ['events', `/build-export/v${v}/build/${nativeId}/events`, { Authorization: s.bearer }, 200],
    ['unknown Last-Event-ID', `/build-export/v${v}/builds/since/0`, { Authorization: s.bearer, 'Last-Event-ID': 'zzzzzzzzzzzzz' }, 400],
    ['204', `/build-export/v${v}/builds/since/now`, { Authorization: s.bearer }, 204],
    ['400', `/build-export/v${v}/builds/since/abc`, { Authorization: s.bearer }, 400],
    ['401', `/build-export/v${v}/builds/since/0`, {}, 401],
  ];

  it('is sent on every v1 answer, 200 streams included', async () => {
    for (const [name, path, headers, status] of cases(1)) {
      const r = await rawGet(s.port, path, headers);
      expect(r.status, name).toBe(status);
      expect(r.headers['deprecated'], name).toBe(`@${Date.parse(V1_DEPRECATED_AT) / 1000}`);
    }
    const streaming = await rawGet(s.port, '/build-export/v1/builds/since/0?stream', { Authorization: s.bearer }, { until: (t) => t.includes('event: Build') });
    expect(streaming.status).toBe(200);
    expect(streaming.headers['deprecated']).toBe(`@${Date.parse(V1_DEPRECATED_AT) / 1000}`);
    expect(streaming.headers['content-type']).toBe('text/event-stream');
  });

  it('is never sent on v2 answers', async () => {
    for (const [name, path, headers, status] of cases(2)) {
      const r = await rawGet(s.port, path, headers);
      expect(r.status, name).toBe(status);
      expect(r.headers['deprecated'], name).toBeUndefined();
    }
  });
});
