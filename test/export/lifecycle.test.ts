// Server shutdown with open streams, anonymous access when configured, and the mirror in
// --follow mode (live copy).
import { describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { mirror } from '../../src/mirror/mirror.js';
import { rawGet, startServer } from './harness.js';
import { parseSseText } from './sse-parse.js';

describe('export lifecycle', { timeout: 120_000 }, () => {
  it('closing the server ends open streams at once', async () => {
    const s = await startServer({ exportConfig: { heartbeatMs: 60_000 } });
    try {
      // The server sends the headers of a stream at once, once the stream is open.
      let connected!: () => void;
      const headers = new Promise<void>((r) => (connected = r));
      const open = rawGet(s.port, '/build-export/v2/builds/since/0?stream', { Authorization: s.bearer }, { until: () => (connected(), false) });
      await headers;
      const started = Date.now();
      await s.app.close();
      const r = await open;
      expect(r.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await s.close();
    }
  });

  it('anonymousAccess: true serves requests without credentials (the default answers 401, see http.test.ts)', async () => {
    const s = await startServer({ exportConfig: { anonymousAccess: true } });
    try {
      await s.store.ingestNdjson([...demoBuilds({ builds: 3, seed: 2 })].join('\n'));
      const r = await rawGet(s.port, '/build-export/v2/builds/since/0');
      expect(r.status).toBe(200);
      expect(parseSseText(r.text).events).toHaveLength(3);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('a bad export config section stops the server from starting, naming the key', async () => {
    await expect(startServer({ exportConfig: { heartbeatMs: -1 } })).rejects.toThrow(/export\.heartbeatMs/);
  });

  it('mirror --follow copies builds as the source receives them', async () => {
    const [source, target] = await Promise.all([startServer({ exportConfig: { heartbeatMs: 100 } }), startServer()]);
    const abort = new AbortController();
    try {
      const first = [...demoBuilds({ builds: 4, seed: 61 })];
      await source.store.ingestNdjson(first.join('\n'));
      const seen: string[] = [];
      const running = mirror(target.store, {
        source: source.base,
        token: source.key,
        follow: true,
        signal: abort.signal,
        onProgress: (p) => p.lastBuildId && seen.push(p.lastBuildId),
      });
      running.catch(() => undefined);
      const wait = (n: number): Promise<unknown> => expect.poll(() => target.store.latestSeq(), { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(n);
      await wait(4);
      const later = [...demoBuilds({ builds: 2, seed: 62 })];
      await source.store.ingestNdjson(later.join('\n'));
      await wait(6);
      expect(await target.store.latestSeq()).toBe(6);
      const ids = [...first, ...later].map((l) => (JSON.parse(l) as { buildId: string }).buildId);
      const exported = await rawGet(target.port, '/build-export/v2/builds/since/0', { Authorization: target.bearer });
      expect(parseSseText(exported.text).events.map((e) => e.id)).toEqual(ids);
      abort.abort(new Error('stop'));
      await expect(running).rejects.toThrow();
    } finally {
      abort.abort();
      await source.close();
      await target.close();
    }
  });
});
