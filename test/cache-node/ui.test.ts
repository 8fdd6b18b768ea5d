// The node UI under each kind of uiAccess.

import { afterEach, describe, expect, it } from 'vitest';
import { basic, fastHash, startTestNode, type TestNode } from './helpers.js';

let t: TestNode | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('node UI', () => {
  it('open: shows entries, size, hits, misses and the configuration', async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' }, targetSize: { type: 'fixed', size: 64 }, maxEntryAgeInHours: 24 }, uiAccess: { type: 'open' } });
    const base = t.node.url;
    await fetch(`${base}/cache/aa11`, { method: 'PUT', body: 'x'.repeat(2048) });
    await fetch(`${base}/cache/aa11`);
    await fetch(`${base}/cache/bb22`);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<dd id="entries">1</dd>');
    expect(html).toContain('<dd id="hits">1</dd>');
    expect(html).toContain('<dd id="misses">1</dd>');
    expect(html).toContain('2.0 KiB of 64.0 MiB');
    expect(html).toContain('<code>aa11</code>');
    expect(html).toContain('fixed, 64 MiB');
    expect(html).toContain('24 h');
    const json = (await (await fetch(`${base}/status.json`)).json()) as Record<string, unknown>;
    expect(json).toMatchObject({ entries: 1, sizeBytes: 2048, hits: 1, misses: 1, writes: 1, targetBytes: 64 * 1024 * 1024, config: { uiAccess: 'open', anonymousLevel: 'readwrite' } });
  });

  it('disabled: no UI at all, the cache still serves', async () => {
    t = await startTestNode({ version: 4, cache: { accessControl: { anonymousLevel: 'read' } }, uiAccess: { type: 'disabled' } });
    expect((await fetch(`${t.node.url}/`)).status).toBe(404);
    expect((await fetch(`${t.node.url}/status.json`)).status).toBe(404);
    expect((await fetch(`${t.node.url}/cache/abc`)).status).toBe(404);
    expect((await fetch(`${t.node.url}/ping`)).status).toBe(200);
  });

  it('secure: Basic with the configured username and hashed password', async () => {
    t = await startTestNode({ version: 4, uiAccess: { type: 'secure', username: 'admin', password: await fastHash('ui-pw') } });
    const none = await fetch(`${t.node.url}/`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect((await fetch(`${t.node.url}/`, { headers: { authorization: basic('admin', 'nope') } })).status).toBe(401);
    expect((await fetch(`${t.node.url}/`, { headers: { authorization: basic('root', 'ui-pw') } })).status).toBe(401);
    expect((await fetch(`${t.node.url}/`, { headers: { authorization: basic('admin', 'ui-pw') } })).status).toBe(200);
    // UI credentials are not cache credentials.
    expect((await fetch(`${t.node.url}/cache/abc`, { headers: { authorization: basic('admin', 'ui-pw') } })).status).toBe(401);
  });

  it('generated: credentials made at start, logged once, kept across reloads', async () => {
    t = await startTestNode({ version: 4, uiAccess: { type: 'generated' } });
    const creds = t.node.generatedUiCredentials();
    expect(creds).not.toBeNull();
    expect(creds!.password.length).toBeGreaterThanOrEqual(20);
    expect((await fetch(`${t.node.url}/`)).status).toBe(401);
    expect((await fetch(`${t.node.url}/`, { headers: { authorization: basic(creds!.username, 'guess') } })).status).toBe(401);
    expect((await fetch(`${t.node.url}/`, { headers: { authorization: basic(creds!.username, creds!.password) } })).status).toBe(200);
    t.writeConfig({ version: 4, cache: { maxArtifactSize: 5 }, uiAccess: { type: 'generated' } });
    await t.node.reload();
    expect(t.node.generatedUiCredentials()).toEqual(creds);
    const logged = t.logs.lines.filter((l) => l.msg.includes('node UI credentials generated'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ username: creds!.username, password: creds!.password });
    // Switching the UI to open applies at once.
    t.writeConfig({ version: 4, uiAccess: { type: 'open' } });
    await t.node.reload();
    expect((await fetch(`${t.node.url}/`)).status).toBe(200);
  });
});
