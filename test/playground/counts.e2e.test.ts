// Regression (issue 13, item 5): with more matches than the listing's page of 1,000, the
// playground shows the true count (from the store) and charts every match (an aggregate from the
// store); an invalid query clears the results; nothing is asked of /api/builds before sign-in;
// the browser's /favicon.ico request is answered.

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, launchBrowser, startServer, type TestServer } from './harness.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('playground counts beyond one page', { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let bundle: string;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    bundle = await buildBundle();
    server = await startServer(bundle, { builds: 1069 });
    browser = await launchBrowser();
    browser.context.on('request', (r) => requests.push(new URL(r.url()).pathname));
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (bundle) await rm(bundle, { recursive: true, force: true });
  });

  it('shows 1,069 matches and charts all of them; clears them for an invalid query; no 401 or 404 on the way', async () => {
    const page = await browser.context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${server.base}/playground/#q=`);
    await page.waitForSelector('.cm-content');
    await expect.poll(() => page.textContent('#results-status')).toContain('Sign in with an access key');
    expect(requests.filter((p) => p.startsWith('/api/builds'))).toEqual([]);

    await page.fill('#access-key', server.accessKey);
    await page.click('#sign-in-button');
    await expect.poll(() => page.textContent('#results-status'), { timeout: 30_000 }).toBe('1,069 builds match (the newest 1000 are listed).');
    expect(await page.locator('#results-table tbody tr').count()).toBe(1000);
    expect(await page.getAttribute('#chart-svg svg', 'aria-label')).toMatch(/^1069 matches over /);

    await page.click('.cm-content');
    await page.keyboard.type('buildOutcom:');
    await expect.poll(() => page.isVisible('#results-table')).toBe(false);
    expect(await page.isVisible('#chart')).toBe(false);
    expect(await page.textContent('#results-status')).toContain('Fix the problems');

    expect(errors).toEqual([]);
    await page.close();
  });
});
