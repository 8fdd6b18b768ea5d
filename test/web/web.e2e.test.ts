// End-to-end: the web app in Debian's headless Chromium against the real server (in-process,
// SQLite, demo builds and a build of 10,000 tasks): sign in with a password from a shared link,
// search, refine with a facet, back and forward, keyboard through the list, open a build and see
// its failures and timeline, follow a tag link, open trends and click a bar through to the
// list, sign out. No console errors, nothing from other origins. Screenshots go to docs/images/.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import { SEE_EVERYTHING } from '../../src/store/types.js';
import { launchBrowser } from '../playground/harness.js';
import { bundle, PLAIN_BUILD, startWebServer, type WebServer } from './harness.js';
import { checkFailedBuildPage } from './failed-build-e2e.js';
import { checkComparePage } from './compare-e2e.js';
import { checkTestsPages } from './tests-e2e.js';
import { checkFailureGroupPage } from './failure-group-e2e.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
// The screenshots are taken on every run (they render every page); they replace the committed
// ones in docs/images/ only when asked (UPDATE_SCREENSHOTS=1), so a test run leaves the tree clean.
const IMAGES =
  process.env['UPDATE_SCREENSHOTS'] === '1' ? resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/images') : mkdtempSync(join(tmpdir(), 'bs-web-shots-'));

describe.skipIf(!existsSync(CHROMIUM))('web app in Chromium', { timeout: 240_000 }, () => {
  let server: WebServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const roots: string[] = [];
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    const [web, playground] = await Promise.all([bundle('web/build.js'), bundle('playground/build.js')]);
    roots.push(web, playground);
    server = await startWebServer({ webRoot: web, playgroundRoot: playground });
    browser = await launchBrowser();
    browser.context.on('request', (r) => requests.push(r.url()));
    page = await browser.context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await mkdir(IMAGES, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    for (const r of roots) await rm(r, { recursive: true, force: true });
    // The screenshots of an ordinary run were only taken to render every page.
    if (process.env['UPDATE_SCREENSHOTS'] !== '1') await rm(IMAGES, { recursive: true, force: true });
  });

  const count = (query: string) => {
    const p = parseQuery(query, { now: Date.now() });
    if (!p.ok || !p.expr) throw new Error(query);
    return server.store.countBuilds({ query: p.expr, visibility: SEE_EVERYTHING });
  };
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const matchText = async () => (await page.textContent('#match-count')) ?? '';
  const urlQuery = () => new URL(page.url()).searchParams.get('query');

  it('asks a signed-out visitor of a shared link to sign in, then shows that link', async () => {
    await page.goto(`${server.base}/builds?query=${encodeURIComponent('buildOutcome:failed')}`);
    await ready();
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.fill('#user', 'alice');
    await page.fill('#password', 'wrong');
    const before = consoleErrors.length;
    await page.click('#sign-in-button');
    await expect.poll(() => page.textContent('#sign-in-message')).toContain('Wrong user name or password');
    // Chromium logs the refused sign-in (401) as a console error: the one error this test causes on purpose.
    expect(consoleErrors.splice(before)).toEqual([expect.stringMatching(/status of 401/)]);
    await page.screenshot({ path: join(IMAGES, 'web-sign-in.png') });
    await page.fill('#password', 'alice-password-1');
    const started = Date.now();
    await page.click('#sign-in-button');
    await page.waitForURL(/\/builds\?query=buildOutcome/);
    await ready();
    console.log(`builds list: first screen ${Date.now() - started} ms after sign-in`);
    const cookies = await browser.context.cookies();
    const session = cookies.find((c) => c.name === 'bs_session')!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe('Strict');
    expect(await matchText()).toBe(`${await count('buildOutcome:failed')} builds match`);
    expect(await page.locator('#builds-table tbody tr').count()).toBe(Math.min(50, await count('buildOutcome:failed')));
  });

  it('counts every match exactly, pages with a keyset, and refines with a facet; back and forward restore the page', async () => {
    await page.goto(`${server.base}/builds`);
    await ready();
    const all = await count('');
    expect(await matchText()).toBe(`${all} builds match`);
    expect(all).toBeGreaterThan(50);
    await page.screenshot({ path: join(IMAGES, 'web-builds.png'), fullPage: false });
    const firstPage = await page.locator('#builds-table a.build-link').allTextContents();
    await page.click('#older-link');
    await ready();
    expect(new URL(page.url()).searchParams.get('after')).toBe(firstPage.at(-1));
    const second = await page.locator('#builds-table a.build-link').allTextContents();
    expect(second.some((id) => firstPage.includes(id))).toBe(false);

    await page.goto(`${server.base}/builds?query=${encodeURIComponent('buildTool:native or buildTool:jsbuild')}`);
    await ready();
    const facet = page.locator('[data-facet="project"] a.facet-link').first();
    const project = (await facet.getAttribute('data-value'))!;
    const facetCount = Number((await facet.locator('.facet-count').textContent())!.replace(/,/g, ''));
    await facet.click();
    await ready();
    expect(urlQuery()).toBe(`(buildTool:native or buildTool:jsbuild) project:${project}`);
    expect(await matchText()).toBe(`${facetCount} build${facetCount === 1 ? '' : 's'} match${facetCount === 1 ? 'es' : ''}`);
    expect(await page.evaluate(() => document.querySelector('.cm-content')!.textContent)).toContain(`project:${project}`);
    await page.goBack();
    await ready();
    expect(urlQuery()).toBe('buildTool:native or buildTool:jsbuild');
    await page.goForward();
    await ready();
    expect(urlQuery()).toContain(`project:${project}`);
  });

  it('fits the builds table in its panel at 1400 px: the Duration and Tags cells lie within it', async () => {
    const before = page.viewportSize();
    await page.setViewportSize({ width: 1400, height: 900 });
    try {
      await page.goto(`${server.base}/builds`);
      await ready();
      const out = await page.evaluate(() => {
        const panel = document.querySelector('.results-panel')!.getBoundingClientRect();
        const heads = [...document.querySelectorAll('#builds-table thead th')].map((th) => th.textContent);
        const cells = [...document.querySelectorAll('#builds-table tbody tr')].flatMap((tr) =>
          ['Duration', 'Tags'].map((name) => {
            const r = (tr as HTMLTableRowElement).cells[heads.indexOf(name)]!.getBoundingClientRect();
            return { name, left: r.left, right: r.right };
          }),
        );
        return { panel: { left: panel.left, right: panel.right }, cells };
      });
      expect(out.cells.length).toBeGreaterThan(0);
      const outside = out.cells.filter((c) => c.left < out.panel.left || c.right > out.panel.right);
      expect(outside, `panel ${JSON.stringify(out.panel)}`).toEqual([]);
    } finally {
      if (before) await page.setViewportSize(before);
    }
  });

  it('marks the results stale while the query is invalid, and searches again when it is fixed', async () => {
    await page.goto(`${server.base}/builds?query=buildOutcome:failed`);
    await ready();
    await page.click('.cm-content');
    await page.keyboard.press('End');
    await page.keyboard.type(' buildOutcom:x');
    await expect.poll(() => page.locator('.results-panel.stale').count()).toBe(1);
    expect(await page.isVisible('.stale-note')).toBe(true);
    for (let i = 0; i < ' buildOutcom:x'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type(' user:ci');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/user%3Aci|user:ci/);
    await ready();
    expect(await page.locator('.results-panel.stale').count()).toBe(0);
    expect(await matchText()).toMatch(new RegExp(`^${await count('buildOutcome:failed user:ci')} builds? match`));
  });

  it('is usable with the keyboard alone: arrows move through the builds, Enter opens one', async () => {
    await page.goto(`${server.base}/builds?query=buildOutcome:failed`);
    await ready();
    const ids = await page.locator('#builds-table a.build-link').allTextContents();
    await page.focus('#builds-table a.build-link');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(ids[1]);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/builds/${ids[1]}$`));
    await ready();
    expect(await page.textContent('#build-title')).toContain('failed');
  });

  it('shows a failed build: header, failures, timeline with hover, slowest tasks, tags as links, raw events', async () => {
    const ids = (await (await page.request.get(`${server.base}/api/search/builds?query=${encodeURIComponent('buildOutcome:failed -project:monorepo -project:checkout-service')}&limit=1`)).json()) as { builds: { id: string }[] };
    const id = ids.builds[0]!.id;
    // An attestation the provenance service made from the build (the service notes it so).
    const attestationUri = `/packages/oci/app/1.0/sha256:${'a'.repeat(64)}/attestations/obj:main/e2e`;
    await server.store.recordAttestation(id, { attestationUri, packageUrl: 'pkg:oci/app@sha256:aaaa?tag=1.0', digest: `sha256:${'a'.repeat(64)}`, predicateType: 'https://slsa.dev/provenance/v1', store: 'obj:main', publishedAt: Date.now() });
    await page.goto(`${server.base}/builds/${id}`);
    await ready();
    expect(await page.locator('#attestations-table tbody tr').count()).toBe(1);
    expect(await page.getAttribute('#attestations-table a.attestation-link', 'href')).toBe(attestationUri);
    expect(await page.locator('#failures li.failure').count()).toBeGreaterThan(0);
    expect(await page.textContent('#failures')).toMatch(/verification/);
    expect(await page.textContent('#failures')).toContain('Failed tasks');
    const canvas = page.locator('#timeline-canvas');
    await canvas.waitFor();
    // Below the failures, tests and console log: brought into view to hover it.
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    // Along the first lane until the pointer is over a bar (gaps between tasks show nothing).
    for (let x = 2; x < box.width && !(await page.isVisible('#timeline-tip')); x += 8) await page.mouse.move(box.x + x, box.y + 22 + 5);
    expect(await page.isVisible('#timeline-tip')).toBe(true);
    expect(await page.textContent('#timeline-tip')).toMatch(/started at \+/);
    expect(await page.locator('#slowest-tasks tbody tr').count()).toBeGreaterThan(1);
    await page.selectOption('#event-type', 'TaskFinished');
    await expect.poll(() => page.locator('#events-table tbody tr').first().textContent()).toContain('TaskFinished');
    await page.screenshot({ path: join(IMAGES, 'web-build-timeline.png'), fullPage: true });

    const tag = page.locator('#tags a.tag').first();
    const tagText = (await tag.textContent())!;
    await tag.click();
    await page.waitForURL(/\/builds\?query=tag/);
    await ready();
    expect(urlQuery()).toMatch(new RegExp(`^tag:"?${tagText}"?$`));
    expect(await matchText()).toMatch(new RegExp(`^${await count(urlQuery()!)} builds? match`));
  });

  it('shows why a build failed at first sight: failed tests, causes, tests and console log (test/web/failed-build-e2e.ts)', async () => {
    await checkFailedBuildPage(server, page, IMAGES);
  });

  it('draws the timeline of a build of 10,000 tasks', async () => {
    await page.goto(`${server.base}/builds/${server.bigBuild}`);
    await ready();
    await page.locator('#timeline-canvas').waitFor();
    expect(await page.getAttribute('#timeline-canvas', 'aria-label')).toMatch(/^Timeline of 10000 tasks .* in 8 lanes$/);
    const box = (await page.locator('#timeline-canvas').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 22 + 3 * (box.height - 26) / 8 + 4);
    await expect.poll(() => page.isVisible('#timeline-tip')).toBe(true);
    expect(await page.textContent('#timeline-tip')).toMatch(/:module\d+:task\d+/);
    expect(await page.textContent('#failures')).toContain(':module');
    // Zoomed in four times: a sixteenth of the build fills the width.
    expect(await page.textContent('#timeline-window')).toMatch(/^showing the whole build/);
    for (let i = 0; i < 4; i++) await page.click('#timeline-zoom-in');
    expect(await page.textContent('#timeline-window')).toMatch(/^showing \+\d/);
    await page.mouse.move(box.x + box.width / 2, box.y + 22 + 4);
    await expect.poll(() => page.isVisible('#timeline-tip')).toBe(true);
    await page.screenshot({ path: join(IMAGES, 'web-build-10k-tasks.png') });
    await page.click('#timeline-reset');
    expect(await page.textContent('#timeline-window')).toMatch(/^showing the whole build/);
  });

  it('gives a build without task events a useful page', async () => {
    await page.goto(`${server.base}/builds/${PLAIN_BUILD}`);
    await ready();
    expect(await page.textContent('#build-title')).toContain('scripts');
    expect(await page.textContent('#tasks')).toContain('This build sent no task events.');
    expect(await page.textContent('#failures')).toContain('No failures.');
    await page.click('#tags a.tag');
    await page.waitForURL(/\/builds\?query=tag/);
    await ready();
    expect(urlQuery()).toBe('tag:"no tasks"');
    expect(await matchText()).toBe('1 build matches');
  });

  it('shows trends, and a click on a bar opens the builds of that day', async () => {
    await page.click('a[data-nav="trends"]');
    await page.waitForURL(/\/trends$/);
    await ready();
    await page.waitForSelector('#chart-outcomes');
    expect(await page.textContent('#trend-summary')).toContain(`${await count('buildStartTime>-31d')} builds`);
    expect(await page.locator('#slowest-table tbody tr').count()).toBeGreaterThan(0);
    expect(await page.locator('#failing-table tbody tr').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(IMAGES, 'web-trends.png'), fullPage: true });
    // The tallest bar's position, from the chart itself.
    const bar = await page.evaluate(() => {
      const chart = (window as unknown as { buildscopeCharts: { outcomes: { data: { datasets: { data: number[] }[] }; getDatasetMeta(i: number): { data: { x: number; y: number }[] } } } }).buildscopeCharts.outcomes;
      const totals = chart.data.datasets[0]!.data.map((_, i) => chart.data.datasets.reduce((s, d) => s + (d.data[i] ?? 0), 0));
      const i = totals.indexOf(Math.max(...totals));
      const el = chart.getDatasetMeta(0).data[i]!;
      return { i, x: el.x, y: el.y + 2, total: totals[i]! };
    });
    const canvas = (await page.locator('#chart-outcomes').boundingBox())!;
    await page.mouse.click(canvas.x + bar.x, canvas.y + bar.y);
    await page.waitForURL(/\/builds\?query=buildStartTime/);
    await ready();
    expect(await matchText()).toBe(`${bar.total} build${bar.total === 1 ? '' : 's'} match${bar.total === 1 ? 'es' : ''}`);
  });

  it('compares two builds: from the list, from the build page, the summary first (test/web/compare-e2e.ts)', async () => {
    await checkComparePage(server, page, IMAGES, consoleErrors);
  });

  it('shows the tests of a query and a test over time: flaky with its interval, the strip linking to builds (test/web/tests-e2e.ts)', async () => {
    await checkTestsPages(server, page, IMAGES, consoleErrors);
  });

  it("shows a failure group's page from the Tests page, a test's page and the trends (test/web/failure-group-e2e.ts)", async () => {
    await checkFailureGroupPage(server, page, IMAGES, consoleErrors);
  });

  it('signs out: the session cookie is gone and pages ask to sign in again', async () => {
    await page.click('#sign-out');
    await page.waitForURL(/\/signin/);
    expect((await browser.context.cookies()).find((c) => c.name === 'bs_session')).toBeUndefined();
    expect((await page.request.get(`${server.base}/api/session`)).status()).toBe(204);
    await page.goto(`${server.base}/trends`);
    await ready();
    expect(new URL(page.url()).pathname).toBe('/signin');
  });

  it('a project-limited user sees only their project', async () => {
    await page.fill('#user', 'bob');
    await page.fill('#password', 'bob-password-1');
    await page.click('#sign-in-button');
    await page.waitForURL(/\/trends/);
    await page.goto(`${server.base}/builds`);
    await ready();
    const inventory = await server.store.countBuilds({ visibility: { projects: ['inventory'], withoutProject: false } });
    expect(await matchText()).toBe(`${inventory} builds match`);
    expect(await page.locator('[data-facet="project"] a.facet-link').allTextContents()).toEqual([expect.stringMatching(/^inventory\d+$/)]);
    await page.click('#sign-out');
    await page.waitForURL(/\/signin/);
  });

  it('raised no console errors and loaded nothing from other origins', () => {
    expect(consoleErrors).toEqual([]);
    const origin = new URL(server.base).origin;
    expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'))).toEqual([]);
  });
});
