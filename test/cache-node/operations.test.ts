// The cache node's operations endpoints: Prometheus metrics that count real hits, misses, writes
// and bytes (behind the UI's access rule), and liveness/readiness without credentials.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fastHash, startTestNode, type TestNode } from './helpers.js';

function sample(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

let t: TestNode | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('cache node operations', () => {
  it('counts hits, misses, writes, bytes in and out, entries and size in /metrics', async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, targetSize: { type: 'fixed', size: 64 } }, uiAccess: { type: 'open' } });
    const base = t.node.url;
    const body = Buffer.alloc(3000, 7);
    expect((await fetch(`${base}/cache/k1`, { method: 'PUT', body })).status).toBe(201);
    expect((await fetch(`${base}/cache/k2`, { method: 'PUT', body: body.subarray(0, 1000) })).status).toBe(201);
    expect((await fetch(`${base}/cache/k1`)).status).toBe(200);
    expect((await fetch(`${base}/cache/k1`)).status).toBe(200);
    expect((await fetch(`${base}/cache/nope`)).status).toBe(404);

    const r = await fetch(`${base}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await r.text();
    expect(sample(text, 'buildscope_cache_hits_total')).toBe(2);
    expect(sample(text, 'buildscope_cache_misses_total')).toBe(1);
    expect(sample(text, 'buildscope_cache_writes_total')).toBe(2);
    expect(sample(text, 'buildscope_cache_bytes_in_total')).toBe(4000);
    expect(sample(text, 'buildscope_cache_bytes_out_total')).toBe(6000);
    expect(sample(text, 'buildscope_cache_entries')).toBe(2);
    expect(sample(text, 'buildscope_cache_size_bytes')).toBe(4000);
    expect(sample(text, 'buildscope_cache_target_size_bytes')).toBe(64 * 1024 * 1024);
    expect(sample(text, 'buildscope_cache_evictions_total')).toBe(0);
    // Counters keep their totals from one scrape to the next.
    expect(sample(await (await fetch(`${base}/metrics`)).text(), 'buildscope_cache_hits_total')).toBe(2);
  });

  it('keeps /metrics behind the UI access rule', async () => {
    t = await startTestNode({ version: 4, uiAccess: { type: 'secure', username: 'admin', password: await fastHash('ui-pw') } });
    expect((await fetch(`${t.node.url}/metrics`)).status).toBe(401);
    const ok = await fetch(`${t.node.url}/metrics`, { headers: { authorization: `Basic ${Buffer.from('admin:ui-pw').toString('base64')}` } });
    expect(ok.status).toBe(200);
    await t.close();
    t = await startTestNode({ version: 4, uiAccess: { type: 'disabled' } });
    expect((await fetch(`${t.node.url}/metrics`)).status).toBe(404);
  });

  it('answers liveness and readiness without credentials; not ready when the storage cannot be written', async () => {
    t = await startTestNode({ version: 4, uiAccess: { type: 'disabled' } });
    expect(await (await fetch(`${t.node.url}/health/live`)).json()).toEqual({ status: 'live' });
    expect(await (await fetch(`${t.node.url}/health/ready`)).json()).toEqual({ status: 'ready' });
    // The storage's temporary directory replaced by a file: no entry can be written (as root too).
    const tmp = join(t.dir, 'data', 'tmp');
    rmSync(tmp, { recursive: true, force: true });
    writeFileSync(tmp, 'not a directory');
    try {
      const r = await fetch(`${t.node.url}/health/ready`);
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    } finally {
      rmSync(tmp, { force: true });
      mkdirSync(tmp);
    }
    expect((await fetch(`${t.node.url}/health/ready`)).status).toBe(200);
  });
});
