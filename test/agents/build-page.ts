// A real tool's build as a person sees it: its page (/builds/<id>) in Debian's headless Chromium,
// signed in with the access key on the sign-in form the shared link leads to. Within 10 seconds of
// opening a failed build, the first screen (not scrolled) must name the failed tests with their
// messages, a compile error's file and line, the failed task, goal, target or script and what
// caused it; the console log must hold the tool's own lines. A passing build's page says it passed
// and lists no failure. One browser per test file, launched on first use:
//
//   const pages = buildPages();
//   afterAll(() => pages.close());
//   await pages.check(server, id, { tool: 'maven', outcome: 'failed', failedTests: [...], consoleLines: ['[INFO] BUILD FAILURE'] });
//
// With UPDATE_SCREENSHOTS=1 the build of `screenshot` is saved as docs/images/web-build-<tool>.png.

import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchBrowser } from '../playground/harness.js';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
const IMAGES = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/images');
/** What "within 10 seconds" allows from opening the page to seeing why the build failed. */
const FIRST_SCREEN_MS = 10_000;

/** The server's address and an access key of a user who may read its builds. */
export interface PageServer {
  readonly url: string;
  readonly accessKey: string;
}

export interface Expected {
  /** The tool's name in the screenshot's file name (web-build-<tool>.png). */
  readonly tool: string;
  readonly outcome: 'failed' | 'succeeded';
  /** Failed tests: the name as the page shows it (suite.name) and words of its failure message. */
  readonly failedTests?: readonly { readonly name: string; readonly message: string }[];
  /** A compile error's diagnostics: file and line. */
  readonly diagnostics?: readonly { readonly file: string; readonly line: number }[];
  /** The failed tasks, goals, targets or scripts, as their failure or the failed tasks name them. */
  readonly failed?: readonly string[];
  /** What caused the failure, as the failures section says it (a cause, an output tail). */
  readonly causes?: readonly string[];
  /** Lines of the tool's own output the console log holds (found with the log's search). */
  readonly consoleLines?: readonly string[];
  /** Save the first screen as docs/images/web-build-<tool>.png when UPDATE_SCREENSHOTS=1. */
  readonly screenshot?: boolean;
}

/** Whether the element's top is within the first screen (the viewport, not scrolled). */
const onFirstScreen = (l: Locator) =>
  l.evaluate((e) => {
    const r = e.getBoundingClientRect();
    return window.scrollY === 0 && r.top >= 0 && r.top < window.innerHeight && r.height > 0;
  });

export interface BuildPages {
  check(server: PageServer, id: string, expected: Expected): Promise<void>;
  close(): Promise<void>;
}

export function buildPages(): BuildPages {
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
  let page: Page | undefined;
  const signedIn = new Set<string>();
  const errors: string[] = [];

  const open = async (server: PageServer, id: string): Promise<Page> => {
    const started = Date.now();
    if (page === undefined) {
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
    }
    if (!signedIn.has(server.url)) {
      // As a person who follows the agent's link: the page asks to sign in, then comes back to the build.
      await page.goto(`${server.url}/builds/${id}`);
      await page.waitForSelector('body[data-ready="true"]');
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.fill('#access-key', server.accessKey);
      await page.click('#key-form button[type="submit"]');
      await page.waitForURL(`${server.url}/builds/${id}`);
      signedIn.add(server.url);
      console.log(`Chromium launched and signed in to ${server.url} in ${Date.now() - started} ms`);
    }
    return page;
  };

  return {
    async check(server, id, expected) {
      // Like the web app's own end-to-end tests: where there is no Chromium the pages go unchecked.
      if (!hasChromium) return console.log(`no ${CHROMIUM}: the page of build ${id} is not checked`);
      const page = await open(server, id);
      errors.length = 0;
      const opened = Date.now();
      let shownAfter = 0;
      await page.goto(`${server.url}/builds/${id}`);
      await page.waitForSelector('body[data-ready="true"]');
      const failures = page.locator('#failures');
      const title = page.locator('#build-title .outcome');
      expect(await title.textContent()).toBe(expected.outcome);

      if (expected.outcome === 'succeeded') {
        expect(await failures.textContent()).toContain('No failures.');
        expect(await failures.getAttribute('class')).not.toContain('has-failures');
        expect(await failures.locator('.failed-test, li.failure, .task-name.failed').count()).toBe(0);
        expect(Date.now() - opened).toBeLessThan(FIRST_SCREEN_MS);
        expect(await onFirstScreen(title)).toBe(true);
      } else {
        expect(await failures.getAttribute('class')).toContain('has-failures');
        // Everything a person needs to say what failed and why, each on the first screen.
        const seen: [string, Locator][] = [];
        for (const t of expected.failedTests ?? []) {
          const item = failures.locator('.failed-test').filter({ has: page.locator('.test-name', { hasText: t.name }) }).first();
          seen.push([`test ${t.name}`, item.locator('.test-name')], [`message of ${t.name}`, item.locator('.failure-message', { hasText: t.message })]);
        }
        for (const d of expected.diagnostics ?? []) seen.push([`${d.file}:${d.line}`, failures.locator('.diagnostic-location', { hasText: `${d.file}:${d.line}` }).first()]);
        for (const f of expected.failed ?? []) seen.push([`failed ${f}`, failures.locator('.failure-text, .task-name.failed', { hasText: f }).first()]);
        for (const c of expected.causes ?? []) seen.push([`cause ${c}`, failures.locator('.failure-message, .cause, .diagnostic, pre.output-tail, .unread-outputs li, .first-error', { hasText: c }).first()]);
        for (const [what, l] of seen) {
          const left = Math.max(1, FIRST_SCREEN_MS - (Date.now() - opened));
          await l.waitFor({ state: 'visible', timeout: left }).catch(async () => {
            throw new Error(`${what}: not shown within ${FIRST_SCREEN_MS} ms; the failures section says:\n${await failures.innerText()}`);
          });
        }
        const ms = Date.now() - opened;
        expect(ms).toBeLessThan(FIRST_SCREEN_MS);
        for (const [what, l] of seen) {
          if (await onFirstScreen(l)) continue;
          // What the person saw instead, for whoever reads the failure.
          const shot = join(tmpdir(), `web-build-${expected.tool}-${id}.png`);
          await page.screenshot({ path: shot });
          expect.fail(`${what}: not on the first screen (see ${shot})`);
        }
        shownAfter = ms;
      }
      if (expected.screenshot && process.env['UPDATE_SCREENSHOTS'] === '1') await page.screenshot({ path: resolve(IMAGES, `web-build-${expected.tool}.png`) });

      // The tool's own lines, found in the console log as a person would: with its search.
      for (const line of expected.consoleLines ?? []) {
        await page.fill('#console-search', line);
        await page.press('#console-search', 'Enter');
        await expect
          .poll(() => page.textContent('#console-matches'), { message: `console line ${line} (the log begins: ${(await page.locator('#console-log').innerText()).slice(0, 2000)})` })
          .toMatch(/^match 1 of \d/);
        await expect.poll(() => page.locator('#console-log .console-line.marked').textContent()).toContain(line);
      }
      expect(errors, 'errors in the browser console').toEqual([]);
      console.log(`${expected.tool} build ${id} (${expected.outcome}): ${expected.outcome === 'failed' ? `why it failed shown ${shownAfter} ms after opening, ` : ''}page checked in ${Date.now() - opened} ms`);
    },
    async close() {
      await browser?.close();
    },
  };
}
