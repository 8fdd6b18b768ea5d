// End-to-end: the playground page in real headless Chromium against the real server (in-process,
// SQLite, demo builds), checked against the server's own API.

import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { formatQuery, parseQuery } from '../../src/query/index.js';
import { buildBundle, launchBrowser, startServer, type TestServer } from './harness.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

interface ApiBuild {
  readonly id: string;
  readonly attributes?: Record<string, unknown>;
}

describe.skipIf(!existsSync(CHROMIUM))('query playground in Chromium', { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let bundle: string;
  const requested: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    bundle = await buildBundle();
    server = await startServer(bundle, { extraPlugins: [exportPlugin] });
    browser = await launchBrowser();
    browser.context.on('request', (r) => requested.push(r.url()));
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (bundle) await rm(bundle, { recursive: true, force: true });
  });

  async function api<T>(path: string): Promise<T> {
    const res = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return (await res.json()) as T;
  }

  async function openPage(hash = ''): Promise<Page> {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${server.base}/playground/${hash}`);
    await page.waitForSelector('.cm-content');
    return page;
  }

  async function signIn(page: Page, key = server.accessKey): Promise<void> {
    await page.fill('#access-key', key);
    await page.click('#sign-in-button');
  }

  /**
   * Replaces the query as if typed: the first part as one text input, the last `keys` characters
   * key by key (real keystrokes are slow on a loaded machine; a few show the live behaviour).
   */
  async function typeQuery(page: Page, text: string, keys = 0): Promise<void> {
    await page.click('.cm-content');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    const cut = Math.max(0, text.length - keys);
    if (cut > 0) await page.keyboard.insertText(text.slice(0, cut));
    if (cut < text.length) await page.keyboard.type(text.slice(cut));
    await page.keyboard.press('Escape'); // close a completion popup the typing may have opened
  }

  const editorText = (page: Page) => page.evaluate(() => (window as unknown as { playground: { view: { state: { doc: { toString(): string } } } } }).playground.view.state.doc.toString());

  it('signs in with an access key kept in session storage and sent as Bearer', async () => {
    const page = await openPage('#q=buildOutcome:failed');
    await expect.poll(() => page.textContent('#results-status')).toContain('Sign in with an access key');

    await signIn(page, 'bsk_not-a-real-key');
    await expect.poll(() => page.textContent('#auth-message')).toContain('Sign-in failed');
    expect(await page.isVisible('#signed-in')).toBe(false);

    const authHeaders: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/builds?')) authHeaders.push(r.headers()['authorization']);
    });
    await signIn(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([server.accessKey]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await page.waitForSelector('#results-table tbody tr');
    expect(authHeaders.length).toBeGreaterThan(0);
    expect(authHeaders.every((h) => h === `Bearer ${server.accessKey}`)).toBe(true);

    await page.click('#sign-out-button');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.isVisible('#sign-in-form')).toBe(true);
    expect(await page.isVisible('#results-table')).toBe(false);
    await page.close();
  });

  it('underlines an error as it is typed and shows its message on hover', async () => {
    const page = await openPage();
    await typeQuery(page, 'buildOutcom:failed tag:CI', 8);
    await page.waitForSelector('.cm-lintRange-error');
    expect(await page.textContent('.cm-lintRange-error')).toBe('buildOutcom');

    // The message is the parser's: the same one the server's explain endpoint gives.
    const explained = await api<{ ok: boolean; diagnostics: { message: string }[] }>(`/api/query/explain?query=${encodeURIComponent('buildOutcom:failed tag:CI')}`);
    expect(explained.ok).toBe(false);
    const message = explained.diagnostics[0]!.message;
    await page.hover('.cm-lintRange-error');
    await page.waitForSelector('.cm-tooltip-lint');
    expect(await page.textContent('.cm-tooltip-lint')).toContain(message);
    expect(await page.textContent('#diagnostics')).toContain(message);
    expect(await page.textContent('#query-status')).toBe('1 problem');
    expect(await page.textContent('#results-status')).toContain('Fix the problems');

    // The "did you mean" fix in the tooltip corrects the field, which clears the underline.
    await page.click('.cm-tooltip-lint .cm-diagnosticAction');
    await expect.poll(() => editorText(page)).toBe('buildOutcome:failed tag:CI');
    await expect.poll(() => page.textContent('#query-status')).toBe('Valid query');
    await expect.poll(() => page.locator('.cm-lintRange-error').count()).toBe(0);
    await page.close();
  });

  it('completes a field name and a closed-set value', async () => {
    const page = await openPage('#q=');
    await page.click('.cm-content');
    await page.keyboard.type('buildOutc');
    const option = page.locator('.cm-tooltip-autocomplete li[aria-selected="true"]', { hasText: 'buildOutcome' });
    await option.first().waitFor();
    // CodeMirror ignores Enter for a short while (interactionDelay, 75 ms) after the list opens, so
    // that a fast typist's Enter is not taken as acceptance; wait past it as a person would.
    await page.waitForTimeout(300);
    await page.keyboard.press('Enter');
    await expect.poll(() => editorText(page)).toMatch(/^buildOutcome/);

    // Make sure we are right after `buildOutcome:` and ask for values.
    const now = await editorText(page);
    if (!now.endsWith(':')) await page.keyboard.type(':');
    await page.keyboard.press('Control+Space');
    const failed = page.locator('.cm-tooltip-autocomplete li', { hasText: 'failed' });
    await failed.first().waitFor();
    await failed.first().click();
    await expect.poll(() => editorText(page)).toBe('buildOutcome:failed');
    await page.close();
  });

  it('inserts ":" with an accepted field and offers the values seen in the data, most frequent first', async () => {
    const page = await openPage('#q=');
    await signIn(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    await page.click('.cm-content');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('proj');
    await page.locator('.cm-tooltip-autocomplete li[aria-selected="true"]', { hasText: 'project' }).first().waitFor();
    await page.waitForTimeout(300);
    await page.keyboard.press('Enter');
    await expect.poll(() => editorText(page)).toBe('project:');
    // The values list opens by itself, with the projects of the demo builds from the API.
    const { values } = await api<{ values: { value: string; count: number }[] }>('/api/search/values?field=project&limit=12');
    expect(values.length).toBeGreaterThan(1);
    const top = values[0]!;
    const option = page.locator('.cm-tooltip-autocomplete li', { hasText: top.value });
    await option.first().waitFor();
    expect(await option.first().textContent()).toContain(`${top.count} builds`);
    await option.first().click();
    await expect.poll(() => editorText(page)).toBe(`project:${top.value}`);

    // After a comparison of a duration, examples rather than nothing.
    await page.keyboard.type(' buildDuration>');
    await page.locator('.cm-tooltip-autocomplete li', { hasText: '5m' }).first().waitFor();
    await page.close();
  });

  it('runs a valid query and shows the builds the API returns for it, with a chart and build details', async () => {
    const query = 'buildOutcome:failed or buildTool:jsbuild';
    const page = await openPage();
    await signIn(page);
    await page.waitForSelector('#signed-in:not([hidden])');
    await typeQuery(page, query);
    await page.click('#run-button');

    const expected = await api<ApiBuild[]>(`/api/builds?${new URLSearchParams({ since: '0', query, models: 'attributes', maxBuilds: '1000' })}`);
    expect(expected.length).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#results-table tbody tr').count()).toBe(expected.length);
    const shown = await page.$$eval('#results-table tbody tr', (rows) => rows.map((r) => r.getAttribute('data-build-id')));
    expect([...shown].sort()).toEqual(expected.map((b) => b.id).sort());
    for (const b of expected) {
      expect(b.attributes?.['buildOutcome'] === 'failed' || b.attributes?.['buildTool'] === 'jsbuild').toBe(true);
    }
    // The status and the chart follow the rows (the chart's days are a request of their own).
    await expect.poll(() => page.textContent('#results-status')).toContain(`${expected.length} build`);

    // The chart counts the same builds.
    await expect.poll(() => page.getAttribute('#chart-svg svg', 'aria-label')).toContain(`${expected.length} matches`);
    expect(await page.locator('#chart-svg g.bar rect.failed').count()).toBeGreaterThan(0);

    // The tree and the SQL follow the query.
    expect(await page.locator('#ast-tree .ast-or').count()).toBe(1);
    await expect.poll(() => page.textContent('#sql-text')).toMatch(/select/i);
    const sqliteSql = await page.textContent('#sql-text');
    await page.click('#tab-postgres');
    await expect.poll(() => page.textContent('#sql-text')).not.toBe(sqliteSql);
    expect(await page.textContent('#sql-text')).toMatch(/\$1/);

    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/playground.png', fullPage: true });

    // A build's attributes open in a dialog, fetched with the key.
    const first = expected[0]!;
    await page.click(`#results-table tr[data-build-id="${first.id}"] a[data-view="attributes"]`);
    await page.waitForSelector('#build-dialog[open] table.attributes');
    expect(await page.textContent('#build-dialog-body')).toContain(first.id);
    // ...and its events, read from the export API's event stream.
    await page.click('#build-dialog-body a[data-view="events"]');
    await page.waitForSelector('#build-dialog ol.events li');
    expect(await page.textContent('#build-dialog ol.events')).toContain('BuildStarted');
    await page.click('#build-dialog-close');
    await page.close();
  });

  it('formats a valid query with the project formatter', async () => {
    const query = 'BUILDOUTCOME:failed   AND (tag:ci OR tag:"night ly")';
    const page = await openPage();
    await typeQuery(page, query);
    await expect.poll(() => page.textContent('#query-status')).toBe('Valid query');
    await page.click('#format-button');
    await expect.poll(() => editorText(page)).toBe(formatQuery(parseQuery(query).expr!));
    // Shift+Alt+F does the same from the keyboard, and a query with problems is left alone.
    await typeQuery(page, 'tag:ci   tag>x');
    await expect.poll(() => page.textContent('#query-status')).toBe('1 problem');
    expect(await page.isDisabled('#format-button')).toBe(true);
    await page.keyboard.press('Shift+Alt+F');
    expect(await editorText(page)).toBe('tag:ci   tag>x');
    await page.close();
  });

  it('round-trips a query through a share link', async () => {
    const query = 'project:my-app (tag:CI or tag:nightly) -user:bot';
    const page = await openPage();
    await typeQuery(page, query);
    await expect.poll(() => editorText(page)).toBe(query);
    await page.click('#share-button');
    const link = await page.inputValue('#share-link');
    expect(link).toBe(`${server.base}/playground/#q=${encodeURIComponent(query)}`);
    await page.close();

    const opened = await browser.context.newPage();
    await opened.goto(link);
    await opened.waitForSelector('.cm-content');
    expect(await editorText(opened)).toBe(query);
    expect(await opened.textContent('#query-status')).toBe('Valid query');

    // Following another link on the same page replaces the query.
    await opened.evaluate(() => (location.hash = '#q=' + encodeURIComponent('buildTool:native')));
    await expect.poll(() => editorText(opened)).toBe('buildTool:native');
    await opened.close();
  });

  it('inserts a field example from the reference and loads an example query', async () => {
    const page = await openPage('#q=');
    await page.fill('#field-search', 'daemon');
    await expect.poll(() => page.textContent('#field-count')).toMatch(/^1 of \d+ fields match$/);
    await page.click('#field-list button.insert');
    expect(await editorText(page)).toBe('native.buildOptions.daemonEnabled');
    await page.click('#examples button.example >> nth=0');
    expect(await editorText(page)).toBe('buildOutcome:failed buildStartTime>-7d');
    await page.close();
  });

  it('ran without a script error', () => {
    expect(pageErrors).toEqual([]);
  });

  it('loads nothing from anywhere but the server', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith(server.base))).toEqual([]);
  });
});
