// /tests?query=…: for the builds the query matches, which tests to look at first: the flakiest,
// those that fail most, the newly failing (regressed or broken) and the slowest, each with its
// failure probability and 95% interval, runs and failures, linking to the test's page; then the
// failure groups, each linking to its page. Data: GET /api/tests (docs/tests.md).

import { h } from '../../ui/dom.js';
import { api, type TestsOverview, type TestSummary } from './api.js';
import { buildsUrl, formatDuration, plural, testsUrl } from './logic.js';
import type { PageContext } from './page.js';
import { queryBar } from './query-bar.js';
import { estimateView, failureGroupsTable, testLink, verdictBadge } from './test-views.js';

/** Tests per list: the first screen shows all four lists. */
export const TESTS_PER_LIST = 10;

type ListKey = 'flakiest' | 'mostFailing' | 'newlyFailing' | 'slowest';

const LISTS: readonly { readonly key: ListKey; readonly title: string; readonly question: string; readonly empty: string }[] = [
  { key: 'flakiest', title: 'Flakiest', question: 'Fail and pass on the same code: most likely to fail an attempt first', empty: 'No flaky test: none failed and passed on a retry, on one commit, or now and then.' },
  { key: 'newlyFailing', title: 'Newly failing', question: 'Passed before, fail in the latest builds: latest first', empty: 'No test started failing lately.' },
  { key: 'mostFailing', title: 'Failing most', question: 'Most failed attempts', empty: 'No test failed in these builds.' },
  { key: 'slowest', title: 'Slowest', question: 'Longest mean duration of an attempt', empty: 'No test ran in these builds.' },
];

function countCell(n: number, cls = ''): HTMLElement {
  return h('td', { class: `num ${cls}`.trim() }, n.toLocaleString('en-US'));
}

function listTable(key: ListKey, tests: readonly TestSummary[]): HTMLElement {
  const slow = key === 'slowest';
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      h('th', { scope: 'col' }, 'Test'),
      h('th', { scope: 'col', class: 'col-verdict' }, 'Verdict'),
      h('th', { scope: 'col', class: slow ? 'col-duration' : 'col-estimate' }, slow ? 'Mean duration' : 'Fails (95% interval)'),
      h('th', { scope: 'col', class: 'col-count' }, 'Runs'),
      h('th', { scope: 'col', class: 'col-count' }, 'Failed'),
    ),
  );
  const body = h(
    'tbody',
    {},
    ...tests.map((t) =>
      h(
        'tr',
        { 'data-test-id': String(t.testId), 'data-verdict': t.verdict },
        h('td', {}, testLink(t)),
        h('td', {}, verdictBadge(t.verdict)),
        h('td', { class: slow ? 'num' : '' }, slow ? formatDuration(t.meanDurationMs) : estimateView(t.estimate, t.verdict)),
        countCell(t.runs),
        countCell(t.failures, t.failures > 0 ? 'has-failures' : ''),
      ),
    ),
  );
  return h('table', { class: 'results test-list', id: `tests-${key}` }, head, body);
}

export async function testsPage(ctx: PageContext, query: string): Promise<void> {
  const results = h('div', { class: 'tests-results', 'aria-busy': 'true' });
  const stale = h('p', { class: 'stale-note', role: 'status', hidden: true }, 'The query has problems: the tests below are those of the last valid query.');
  const bar = queryBar(
    query,
    (q, push) => ctx.navigate(testsUrl(q), !push),
    (valid) => {
      results.classList.toggle('stale', !valid);
      stale.hidden = valid;
    },
  );
  const summary = h('p', { class: 'count', id: 'tests-summary', role: 'status', 'aria-live': 'polite' }, 'Reading the tests…');
  const head = h(
    'section',
    { class: 'panel tests-head', 'aria-labelledby': 'tests-heading' },
    h('div', { class: 'results-head' }, h('h1', { id: 'tests-heading' }, 'Tests'), summary, h('a', { href: buildsUrl(query), class: 'trends-link' }, 'These builds')),
    stale,
  );
  ctx.main.replaceChildren(bar.element, head, results);
  ctx.setTitle('Tests');

  const signal = ctx.signal;
  const [overview, count] = await Promise.allSettled([api.tests(query, TESTS_PER_LIST, signal), api.count(query, signal)]);
  if (signal.aborted) return;
  results.setAttribute('aria-busy', 'false');
  if (overview.status === 'rejected') {
    summary.textContent = '';
    results.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Could not read the tests: ${(overview.reason as Error).message}`));
    ctx.ready();
    return;
  }
  const o: TestsOverview = overview.value;
  const builds = count.status === 'fulfilled' ? ` in the ${plural(count.value.count, 'build')} that match` : '';
  summary.textContent = o.tests === 0 ? `No tests ran${builds}` : `${plural(o.tests, 'test')}${o.tests >= 500 ? ' (those with most failures)' : ''} ran${builds}`;
  const cards = LISTS.map((l) =>
    h(
      'section',
      { class: 'panel test-card', id: `card-${l.key}`, 'aria-labelledby': `heading-${l.key}` },
      h('h2', { id: `heading-${l.key}` }, l.title),
      h('p', { class: 'muted card-question' }, l.question),
      o[l.key].length === 0 ? h('p', { class: 'muted empty' }, l.empty) : h('div', { class: 'table-wrap' }, listTable(l.key, o[l.key])),
    ),
  );
  results.replaceChildren(
    h('div', { class: 'test-cards' }, ...cards),
    h(
      'section',
      { class: 'panel', id: 'groups-section', 'aria-labelledby': 'groups-heading' },
      h('h2', { id: 'groups-heading' }, 'Failure groups'),
      h('p', { class: 'muted card-question' }, 'The same failure in many builds and tests: messages alike but for numbers, paths, hashes and times. Most builds first; each opens its page, the last seen its latest build.'),
      h('div', { class: 'table-wrap' }, failureGroupsTable(o.failureGroups, query, 'failure-groups')),
    ),
  );
  ctx.ready();
}
