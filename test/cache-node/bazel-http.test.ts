// Bazel's HTTP cache protocol (/ac/ and /cas/) over real HTTP on 127.0.0.1: digests verified on
// write, action results refused while the content they name is absent, user levels as Bazel
// sends credentials, eviction never leaving an action result that names evicted content, the
// bound on concurrent writes, and the metrics.

import { request } from 'node:http';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, fastHash, startTestNode, type TestNode } from './helpers.js';
import { actionKey, actionResult, blob, metric, tree, type Blob } from './bazel-support.js';
import { waitFor } from '../support/wait.js';

const KiB = 1024;

describe("Bazel's HTTP cache protocol", () => {
  let t: TestNode;
  let base: string;
  const ci = basic('ci', 'ci-password');
  const dev = basic('dev', 'dev-password');

  beforeAll(async () => {
    t = await startTestNode(
      {
        version: 4,
        cache: {
          accessControl: { anonymousLevel: 'read', users: { ci: { level: 'readwrite', password: await fastHash('ci-password') }, dev: { level: 'read', password: await fastHash('dev-password') } } },
          targetSize: { type: 'fixed', size: 1 },
          maxArtifactSize: 1,
        },
        uiAccess: { type: 'open' },
      },
      { maxConcurrentWrites: 1 },
    );
    base = t.node.url;
  });
  afterAll(async () => t?.close());

  const put = (path: string, body: Buffer, authorization = ci) => fetch(`${base}${path}`, { method: 'PUT', body: new Uint8Array(body), headers: { authorization } });
  const get = (path: string, authorization?: string) => fetch(`${base}${path}`, { headers: authorization ? { authorization } : {} });
  const putBlob = (b: Blob, authorization = ci) => put(`/cas/${b.hash}`, b.data, authorization);
  const tmpFiles = () => readdirSync(join(t.dir, 'data', 'tmp'));

  it('stores content under its SHA-256 and serves it back', async () => {
    const b = blob();
    expect((await putBlob(b)).status).toBe(204);
    const r = await get(`/cas/${b.hash}`);
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer())).toEqual(b.data);
    const head = await fetch(`${base}/cas/${b.hash}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(b.size));
    expect((await get(`/cas/${blob().hash}`)).status).toBe(404);
    // On disk beside the Gradle entries, not among them.
    expect(readdirSync(join(t.dir, 'data', 'cas', b.hash.slice(0, 2)))).toContain(b.hash);
  });

  it('refuses content whose SHA-256 is not its key with 400, and stores nothing', async () => {
    const b = blob();
    const r = await put(`/cas/${b.hash}`, randomBytes(100));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/Digest mismatch/);
    expect((await get(`/cas/${b.hash}`)).status).toBe(404);
    expect(tmpFiles()).toEqual([]);
    expect(t.node.status().bazel.http.refused.digestMismatch).toBe(1);
  });

  it('refuses keys that are not SHA-256 digests', async () => {
    expect((await get('/cas/abc')).status).toBe(400);
    expect((await put('/ac/ABCDEF', Buffer.from('x'))).status).toBe(400);
    expect((await fetch(`${base}/cas/${blob().hash}`, { method: 'DELETE' })).status).toBe(405);
  });

  it('stores an action result only when every blob it names is present', async () => {
    const out = blob();
    const stdout = blob('hello\n');
    const inTree = blob();
    const dir = tree([inTree]);
    const key = actionKey();
    const result = actionResult({ files: [out], stdout, trees: [dir] });
    let r = await put(`/ac/${key}`, result);
    expect(r.status).toBe(409);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/3 blob\(s\) not in \/cas\//);
    for (const b of [out, stdout, dir]) expect((await putBlob(b)).status).toBe(204);
    // The Tree is there, a file in it is not.
    r = await put(`/ac/${key}`, result);
    expect(r.status).toBe(409);
    expect(((await r.json()) as { detail: string }).detail).toContain(inTree.hash);
    expect((await get(`/ac/${key}`)).status).toBe(404);
    expect((await putBlob(inTree)).status).toBe(204);
    expect((await put(`/ac/${key}`, result)).status).toBe(204);
    const hit = await get(`/ac/${key}`);
    expect(hit.status).toBe(200);
    expect(Buffer.from(await hit.arrayBuffer())).toEqual(result);
    // Not an ActionResult at all.
    expect((await put(`/ac/${actionKey()}`, Buffer.from([0xff, 0xff, 0xff]))).status).toBe(400);
    // The empty blob is always present (Bazel never uploads it).
    expect((await put(`/ac/${actionKey()}`, actionResult({ files: [blob(Buffer.alloc(0))] }))).status).toBe(204);
    expect(t.node.status().bazel.http.refused.missingContent).toBe(2);
  });

  it('gives read users and anonymous reads no writes; takes credentials as Bazel sends them', async () => {
    const b = blob();
    expect((await putBlob(b, dev)).status).toBe(403);
    expect((await fetch(`${base}/cas/${b.hash}`, { method: 'PUT', body: new Uint8Array(b.data) })).status).toBe(401);
    expect((await putBlob(b, basic('ci', 'wrong'))).status).toBe(401);
    expect((await get(`/cas/${b.hash}`)).status).toBe(404);
    // Bazel encodes the user info of --remote_cache=http://user:pass@host with the URL-safe base64 alphabet.
    const urlSafe = `Basic ${Buffer.from('ci:ci-password').toString('base64url')}`;
    expect((await putBlob(b, urlSafe)).status).toBe(204);
    expect((await get(`/cas/${b.hash}`, dev)).status).toBe(200);
    expect((await get(`/cas/${b.hash}`)).status).toBe(200);
  });

  it('refuses an entry over maxArtifactSize with 413', async () => {
    const big = blob(randomBytes(1024 * KiB + 1));
    expect((await putBlob(big)).status).toBe(413);
    expect((await get(`/cas/${big.hash}`)).status).toBe(404);
  });

  it('never answers an action result whose content was evicted', async () => {
    const out = blob(randomBytes(400 * KiB));
    const key = actionKey();
    expect((await putBlob(out)).status).toBe(204);
    expect((await put(`/ac/${key}`, actionResult({ files: [out] }))).status).toBe(204);
    expect((await get(`/ac/${key}`)).status).toBe(200);
    // A hit marks its content used: two newer blobs evict older entries first.
    const filler = [blob(randomBytes(300 * KiB)), blob(randomBytes(300 * KiB))];
    for (const f of filler) expect((await putBlob(f)).status).toBe(204);
    await waitFor(() => t.node.store.bytes <= 1024 * KiB, 'the store to shrink to 1 MiB');
    expect((await get(`/cas/${out.hash}`)).status).toBe(200);
    expect((await get(`/ac/${key}`)).status).toBe(200);
    // An action result stored after its content and never read since: newer blobs push the
    // content out while the result stays. Reading it then is a miss, and removes it.
    const x = blob(randomBytes(400 * KiB));
    const y = blob(randomBytes(300 * KiB));
    const later = actionKey();
    expect((await putBlob(x)).status).toBe(204);
    expect((await putBlob(y)).status).toBe(204);
    expect((await put(`/ac/${later}`, actionResult({ files: [x, y] }))).status).toBe(204);
    const evictedBefore = t.node.status().evictedByPart.cas;
    expect((await putBlob(blob(randomBytes(500 * KiB)))).status).toBe(204);
    await waitFor(() => t.node.store.bytes <= 1024 * KiB, 'the store to shrink to 1 MiB');
    expect(t.node.status().evictedByPart.cas).toBeGreaterThan(evictedBefore);
    expect((await get(`/cas/${x.hash}`)).status).toBe(404);
    expect(t.node.store.has(`ac/${later}`)).toBe(true);
    const dangling = t.node.status().bazel.http.refused.dangling;
    expect((await get(`/ac/${later}`)).status).toBe(404);
    expect(t.node.status().bazel.http.refused.dangling).toBe(dangling + 1);
    // Gone from the store, not only hidden.
    expect(t.node.store.has(`ac/${later}`)).toBe(false);
  });

  it('refuses a write beyond the bound on concurrent writes with 429 and Retry-After', async () => {
    const slow = blob(randomBytes(64 * KiB));
    // The first upload holds the only write slot while its body is incomplete.
    const first = request(`${base}/cas/${slow.hash}`, { method: 'PUT', headers: { authorization: ci, 'content-length': String(slow.size) } });
    const firstAnswer = new Promise<number>((resolve, reject) => {
      first.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      first.on('error', reject);
    });
    first.write(slow.data.subarray(0, 1000));
    await waitFor(() => t.node.status().bazel.http.refused.shed === 0 && tmpFiles().length === 1, 'no shed writes and one temporary file');
    const second = await putBlob(blob());
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    first.end(slow.data.subarray(1000));
    expect(await firstAnswer).toBe(204);
    expect((await putBlob(blob())).status).toBe(204);
  });

  it('counts hits and misses of the action cache and the content store apart, by protocol', async () => {
    const text = await (await get('/metrics')).text();
    const s = t.node.status().bazel.http;
    expect(s.ac.hits).toBeGreaterThan(0);
    expect(s.cas.hits).toBeGreaterThan(0);
    expect(metric(text, 'buildscope_cache_bazel_hits_total', { protocol: 'http', part: 'ac' })).toBe(s.ac.hits);
    expect(metric(text, 'buildscope_cache_bazel_misses_total', { protocol: 'http', part: 'ac' })).toBe(s.ac.misses);
    expect(metric(text, 'buildscope_cache_bazel_hits_total', { protocol: 'http', part: 'cas' })).toBe(s.cas.hits);
    expect(metric(text, 'buildscope_cache_bazel_misses_total', { protocol: 'http', part: 'cas' })).toBe(s.cas.misses);
    expect(metric(text, 'buildscope_cache_bazel_bytes_in_total', { protocol: 'http', part: 'cas' })).toBe(s.cas.bytesIn);
    expect(metric(text, 'buildscope_cache_bazel_bytes_out_total', { protocol: 'http', part: 'cas' })).toBe(s.cas.bytesOut);
    expect(metric(text, 'buildscope_cache_bazel_refused_total', { protocol: 'http', reason: 'digestMismatch' })).toBe(1);
    expect(metric(text, 'buildscope_cache_bazel_refused_total', { protocol: 'http', reason: 'shed' })).toBe(1);
    expect(metric(text, 'buildscope_cache_evictions_by_part_total', { part: 'cas' })).toBe(t.node.status().evictedByPart.cas);
    // The Gradle/Maven counters are not mixed in.
    expect(t.node.status().hits).toBe(0);
  });

  it('rebuilds the index of Bazel entries from disk on restart', async () => {
    const b = blob();
    expect((await putBlob(b)).status).toBe(204);
    const key = actionKey();
    expect((await put(`/ac/${key}`, actionResult({ files: [b] }))).status).toBe(204);
    await t.restart({ maxConcurrentWrites: 1 });
    base = t.node.url;
    expect((await get(`/ac/${key}`)).status).toBe(200);
    expect((await get(`/cas/${b.hash}`)).status).toBe(200);
  });
});
