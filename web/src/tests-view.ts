// The build page's Tests section: counts by outcome, then the tests a page at a time from
// GET /api/builds/{id}/tests (failed and retried first, then the slowest), filtered by name and
// outcome. A build of 10,000 tests draws 100 rows, never all of them.

import { h } from '../../ui/dom.js';
import type { BuildDetails } from './api.js';
import { failedTest, testName } from './failures-view.js';
import { formatDuration } from './logic.js';
import { reportApi, type TestFilter, type TestRow } from './report-api.js';

export const TESTS_PER_PAGE = 100;
const FILTER_DELAY_MS = 250;

function row(t: TestRow): HTMLElement {
  const outcome = t.flaky ? 'flaky' : (t.outcome ?? 'unknown');
  const detail = t.outcome === 'failed' ? h('ul', { class: 'failed-tests inline' }, failedTest(t)) : t.skipReason ? h('span', { class: 'muted' }, t.skipReason) : '';
  return h(
    'tr',
    { class: `test-row ${outcome}` },
    h('td', {}, h('span', { class: `test-outcome ${outcome}` }, outcome)),
    h('td', {}, t.outcome === 'failed' ? detail : testName(t), t.outcome !== 'failed' && detail ? h('div', {}, detail) : ''),
    h('td', { class: 'num' }, t.duration === null ? '–' : formatDuration(t.duration)),
    h('td', { class: 'num' }, String(t.attempts)),
  );
}

/** Fills `box` (the section) with the tests of build `b`. */
export function testsView(box: HTMLElement, b: BuildDetails, signal: AbortSignal): void {
  const c = b.tests.counts;
  if (c.total === 0) {
    box.append(h('p', { class: 'muted' }, 'This build sent no test events.'));
    return;
  }
  const chip = (n: number, label: string, cls: string) => h('span', { class: `count-chip ${cls}` }, `${n.toLocaleString('en-US')} ${label}`);
  box.append(
    h('p', { class: 'test-counts', id: 'test-counts' }, chip(c.failed, 'failed', 'failed'), chip(c.flaky, 'flaky', 'flaky'), chip(c.passed, 'passed', 'passed'), chip(c.skipped, 'skipped', 'skipped')),
  );
  const name = h('input', { type: 'search', id: 'test-filter', placeholder: 'Filter by name', 'aria-label': 'Filter tests by name', autocomplete: 'off' });
  const outcome = h(
    'select',
    { id: 'test-outcome', 'aria-label': 'Outcome' },
    ...(
      [
        ['all', 'All outcomes'],
        ['failed', 'Failed'],
        ['flaky', 'Flaky (retried)'],
        ['passed', 'Passed'],
        ['skipped', 'Skipped'],
      ] as const
    ).map(([v, l]) => h('option', { value: v }, l)),
  );
  const status = h('p', { class: 'muted', role: 'status', id: 'tests-status' });
  const table = h('table', { class: 'results tests', id: 'tests-table' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of tests' });
  box.append(h('div', { class: 'controls' }, name, ' ', outcome), status, h('div', { class: 'table-wrap' }, table), pager);
  let shown = 0;
  const show = async (offset: number) => {
    const mine = ++shown;
    let page;
    try {
      page = await reportApi.tests(b.id, { name: name.value, filter: outcome.value as TestFilter, offset, limit: TESTS_PER_PAGE }, signal);
    } catch (err) {
      if (!signal.aborted) status.textContent = `Could not load the tests: ${(err as Error).message}`;
      return;
    }
    if (mine !== shown) return;
    status.textContent = page.total === 0 ? 'No test matches.' : `Tests ${(offset + 1).toLocaleString('en-US')}–${(offset + page.tests.length).toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}`;
    table.replaceChildren(
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Outcome'), h('th', { scope: 'col' }, 'Test'), h('th', { scope: 'col' }, 'Duration'), h('th', { scope: 'col' }, 'Attempts'))),
      h('tbody', {}, ...page.tests.map(row)),
    );
    const prev = h('button', { type: 'button', disabled: offset === 0 }, '« Previous');
    const next = h('button', { type: 'button', disabled: offset + TESTS_PER_PAGE >= page.total, id: 'tests-next' }, 'Next »');
    prev.addEventListener('click', () => void show(Math.max(0, offset - TESTS_PER_PAGE)));
    next.addEventListener('click', () => void show(offset + TESTS_PER_PAGE));
    pager.replaceChildren(prev, next);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  name.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void show(0), FILTER_DELAY_MS);
  });
  outcome.addEventListener('change', () => void show(0));
  void show(0);
}
