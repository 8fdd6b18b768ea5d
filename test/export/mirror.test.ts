// Mirroring server-to-server through the export API: after `mirror`, both servers answer the
// same searches identically; dropped connections are resumed with Last-Event-ID.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBuilds } from '../../src/store/demo/demo-data.js';
import { mirror, exportBase } from '../../src/mirror/mirror.js';
import { openDatabase } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { startServer, type TestServer } from './harness.js';
import { SEARCHES, search } from './searches.js';
import { CLI } from '../support/compiled-cli.js';

let source: TestServer;
let target: TestServer;
let searcher: { bearer: string };
let targetSearcher: { bearer: string };
let ids: string[];

beforeAll(async () => {
  [source, target] = await Promise.all([startServer(), startServer()]);
  const lines = [...demoBuilds({ builds: 48, seed: 5 })];
  await source.store.ingestNdjson(lines.join('\n'));
  ids = lines.map((l) => (JSON.parse(l) as { buildId: string }).buildId);
  searcher = await source.addUser('searcher', ['accessBuildDataViaApi']);
  targetSearcher = await target.addUser('searcher', ['accessBuildDataViaApi']);
});
afterAll(async () => {
  await source?.close();
  await target?.close();
});

/** A TCP proxy that cuts each of the first `cuts` connections after `afterBytes` bytes of response. */
async function cuttingProxy(port: number, cuts: number, afterBytes: number): Promise<{ port: number; cut: number; close(): Promise<void> }> {
  const state = { cut: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = connect(port, '127.0.0.1');
    sockets.add(upstream);
    const cutThis = state.cut < cuts;
    if (cutThis) state.cut++;
    let bytes = 0;
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d: Buffer) => {
      bytes += d.length;
      if (cutThis && bytes > afterBytes) {
        client.write(d.subarray(0, Math.max(0, d.length - (bytes - afterBytes))));
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    get cut() {
      return state.cut;
    },
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('mirror', { timeout: 120_000 }, () => {
  it('normalises the source address to its /build-export/v2 base', () => {
    expect(exportBase('http://h:1')).toBe('http://h:1/build-export/v2');
    expect(exportBase('http://h:1/')).toBe('http://h:1/build-export/v2');
    expect(exportBase('http://h:1/bs/build-export/v2/')).toBe('http://h:1/bs/build-export/v2');
  });

  it('copies every build and its events; both servers then answer every search identically', async () => {
    const progress: number[] = [];
    const result = await mirror(target.store, { source: source.base, token: source.key, concurrency: 6, onProgress: (p) => progress.push(p.builds) });
    expect(result).toMatchObject({ builds: 48, stored: 48, unchanged: 0, rejected: 0, failures: [] });
    expect(progress.at(-1)).toBe(48);
    expect(result.events).toBeGreaterThan(48 * 20);
    const exported = await fetch(`${target.base}/build-export/v2/builds/since/0`, { headers: { authorization: target.bearer } });
    const text = await exported.text();
    // Stored in the source's availability order.
    expect([...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1])).toEqual(ids);
    for (const q of SEARCHES) {
      const [a, b] = await Promise.all([search(source.base, searcher.bearer, q), search(target.base, targetSearcher.bearer, q)]);
      expect(b, q).toEqual(a);
    }
    // The events themselves are the same, byte for byte in the export stream.
    for (const id of ids.slice(0, 5)) {
      const [ea = '', eb = ''] = await Promise.all(
        [source, target].map(async (s) => (await fetch(`${s.base}/build-export/v2/build/${id}/events`, { headers: { authorization: s.bearer } })).text()),
      );
      expect(ea).toMatch(/^id: /);
      expect(eb.replace(/"timestamp":\d+,"toolType"/, '')).toEqual(ea.replace(/"timestamp":\d+,"toolType"/, ''));
    }
  });

  it('mirroring again is a no-op (same content)', async () => {
    const result = await mirror(target.store, { source: source.base, token: source.key });
    expect(result).toMatchObject({ builds: 48, stored: 0, unchanged: 48, rejected: 0 });
  });

  it('resumes with Last-Event-ID after dropped connections', async () => {
    const fresh = await startServer();
    // Cut the listing and the first event streams in the middle of a message.
    const proxy = await cuttingProxy(source.port, 4, 3000);
    try {
      const reconnects: (string | undefined)[] = [];
      const result = await mirror(fresh.store, {
        source: `http://127.0.0.1:${proxy.port}`,
        token: source.key,
        concurrency: 3,
        retryDelayMs: 20,
        onReconnect: (_reason, last) => reconnects.push(last),
      });
      expect(proxy.cut).toBe(4);
      // A cut between two responses of a kept-alive connection is retried by fetch itself.
      expect(reconnects.length).toBeGreaterThanOrEqual(2);
      // At least one stream broke off after messages and resumed after the last one.
      expect(reconnects.some((id) => id !== undefined)).toBe(true);
      expect(result).toMatchObject({ builds: 48, stored: 48, rejected: 0 });
      for (const q of SEARCHES.slice(0, 4)) {
        const other = await fresh.addUser(`s${SEARCHES.indexOf(q)}`, ['accessBuildDataViaApi']);
        expect(await search(fresh.base, other.bearer, q), q).toEqual(await search(source.base, searcher.bearer, q));
      }
    } finally {
      await proxy.close();
      await fresh.close();
    }
  });

  it('fails clearly on a refused token', async () => {
    await expect(mirror(target.store, { source: source.base, token: 'bsk_' + 'x'.repeat(40) })).rejects.toThrow(/401/);
  });

  it('the mirror command copies builds into a data directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-mirror-cli-'));
    try {
      const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [...CLI, 'mirror', source.base, '--token', source.key, '--data', dir, '--no-progress'], {
          env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(out.stderr, out.stderr).not.toMatch(/error/i);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/Mirrored 48 builds \(48 new, 0 already present, 0 failed\)/);
      const db = await openDatabase({ data: dir });
      const store = await openBuildStore(db);
      expect(await store.latestSeq()).toBe(48);
      await store.close();
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
