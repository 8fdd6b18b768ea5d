// A failed build's page in Chromium, run by web.e2e.test.ts on its server and browser: within 10
// seconds of opening it the first screen says which tests and task failed and why (the failed
// test's name and assertion message, the compile error's file and line); the stack trace expands;
// the Tests section counts by outcome, lists failed and flaky first, filters by name and outcome
// and pages 1,204 tests; the console log renders ANSI colours, pages 1,500 lines, links the first
// error line, finds a line by search and opens at a line named in the address; a Bazel test whose
// log the server could not read says why. Takes docs/images/web-build.png.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { CONSOLE_LINES, DIAGNOSTIC, FAILED_BUILD, FAILED_TEST, FIRST_ERROR_LINE, TEST_COUNT } from './failed-build.js';
import type { WebServer } from './harness.js';

/** Whether the element's top is within the first screen (the viewport, not scrolled). */
const onFirstScreen = (page: Page, selector: string) =>
  page.locator(selector).first().evaluate((e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight && r.height > 0;
  });

export async function checkFailedBuildPage(server: WebServer, page: Page, images: string): Promise<void> {
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const opened = Date.now();
  await page.goto(`${server.base}/builds/${FAILED_BUILD}`);
  await ready();
  // What failed and why, on the first screen, within 10 seconds.
  const failures = page.locator('#failures');
  await expect.poll(() => failures.textContent()).toContain(FAILED_TEST.message);
  const seen = Date.now() - opened;
  expect(seen).toBeLessThan(10_000);
  const text = (await failures.textContent())!;
  expect(text).toContain(`${FAILED_TEST.suite}.${FAILED_TEST.name}`);
  expect(text).toContain('Failed tests (2)');
  expect(text).toContain(`${DIAGNOSTIC.file}:${DIAGNOSTIC.line}:${DIAGNOSTIC.column}`);
  expect(text).toContain(DIAGNOSTIC.message);
  expect(text).toContain('Failed tasks');
  expect(text).toContain(':app:test');
  expect(await failures.locator('pre.output-tail').textContent()).toContain('1 error');
  for (const s of ['#failures .failed-test .test-name', '#failures .failure-message', '#failures .diagnostic-location']) expect(await onFirstScreen(page, s), s).toBe(true);
  await page.screenshot({ path: join(images, 'web-build.png') });
  console.log(`failed build page: failures shown ${seen} ms after opening`);

  // The stack trace expands.
  const trace = failures.locator('.failed-test', { hasText: FAILED_TEST.name }).locator('details.stack-trace');
  expect(await trace.locator('pre').isVisible()).toBe(false);
  await trace.locator('summary').click();
  expect(await trace.locator('pre').textContent()).toContain('PriceTest.java:42');

  // Tests: counts, failed and flaky first, a page of 100, filters.
  expect(await page.textContent('#test-counts')).toBe('2 failed1 flaky1,199 passed3 skipped');
  const status = () => page.textContent('#tests-status');
  await expect.poll(status).toBe(`Tests 1–100 of ${TEST_COUNT.toLocaleString('en-US')}`);
  const outcomes = await page.locator('#tests-table tbody tr td:first-child').allTextContents();
  expect(outcomes.slice(0, 3)).toEqual(['failed', 'failed', 'flaky']);
  expect(outcomes).toHaveLength(100);
  await page.click('#tests-next');
  await expect.poll(status).toBe(`Tests 101–200 of ${TEST_COUNT.toLocaleString('en-US')}`);
  await page.fill('#test-filter', 'stockservice');
  await expect.poll(status).toBe('Tests 1–1 of 1');
  expect(await page.textContent('#tests-table tbody')).toContain('this.warehouse');
  await page.fill('#test-filter', '');
  await page.selectOption('#test-outcome', 'flaky');
  // (The status of the name filter was "1 of 1" too: wait for the flaky test itself.)
  await expect.poll(() => page.textContent('#tests-table tbody')).toContain('locksAfterFiveFailures');
  expect(await status()).toBe('Tests 1–1 of 1');

  // The console: a page of 500 lines, coloured, cut by the agent (said), the first error linked.
  const lines = page.locator('#console-log .console-line');
  await expect.poll(() => lines.count()).toBe(500);
  expect(await page.textContent('#console-status')).toBe(`Lines 1–500 of ${CONSOLE_LINES.toLocaleString('en-US')}`);
  expect(await lines.nth(1).locator('span[style]').first().evaluate((e) => getComputedStyle(e).color)).toMatch(/^rgb\(/);
  expect(await lines.nth(1).textContent()).not.toContain('\u001b');
  expect(await page.isVisible('#console-truncated')).toBe(true);
  await page.click('#first-error-link');
  const errorLine = page.locator(`#console-L${FIRST_ERROR_LINE + 1}`);
  await expect.poll(() => errorLine.getAttribute('class')).toContain('marked');
  expect(await errorLine.textContent()).toContain(`${DIAGNOSTIC.file}:${DIAGNOSTIC.line}: error:`);
  expect(new URL(page.url()).hash).toBe(`#console-L${FIRST_ERROR_LINE + 1}`);
  expect(await page.textContent('#console-status')).toBe(`Lines 1,001–1,500 of ${CONSOLE_LINES.toLocaleString('en-US')}`);
  // Search within the whole log, from the first page.
  await page.fill('#console-search', 'build failed');
  await page.press('#console-search', 'Enter');
  await expect.poll(() => page.textContent('#console-matches')).toBe('match 1 of 1');
  await expect.poll(() => page.locator('#console-L1401').getAttribute('class')).toContain('marked');
  // A line named in the address (a shared link) opens at that line.
  await page.goto(`${server.base}/builds/${FAILED_BUILD}#console-L7`);
  await ready();
  await expect.poll(() => page.locator('#console-L7').getAttribute('class')).toContain('marked');

  // A Bazel test whose log the server could not read (it is in another cache): the page says why.
  const at = Date.now() - 60_000;
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  const unread = { name: 'test.log', uri: 'bytestream://other-cache.example.com:5072/blobs/ab/12', reason: 'otherCache' };
  const bazel = JSON.stringify({
    buildId: 'bzlunread0001',
    toolType: 'targetbuild',
    toolVersion: '4.2.3',
    agentVersion: '1',
    events: [
      ev(at, 'BuildStarted', {}),
      ev(at, 'ProjectStructure', { rootProjectName: 'greeter' }),
      ev(at + 1, 'TestStarted', { id: 1, suite: '//greeter', name: 'greeting_test', task: '//greeter:greeting_test' }),
      ev(at + 900, 'TestFinished', { id: 1, outcome: 'failed', failure: { message: 'exited with error code 1' }, unreadOutputs: [unread] }),
      ev(at + 1000, 'BuildFinished', { outcome: 'failed', failures: [{ classification: 'verification', message: '//greeter:greeting_test failed' }] }),
    ],
  });
  expect((await server.store.ingestNdjson(bazel)).map((r) => r.status)).toEqual(['stored']);
  await page.goto(`${server.base}/builds/bzlunread0001`);
  await ready();
  await expect.poll(() => page.textContent('#failures')).toContain('exited with error code 1');
  expect(await page.textContent('#failures .unread-outputs')).toBe('Not read: test.log (it is in a cache the server is not set to read (bes.cacheNodes))');
}
