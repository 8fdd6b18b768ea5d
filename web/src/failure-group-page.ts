// /failure-groups/<id>?query=…: one failure, however many builds and tests it hit. Its pattern (the
// message with what changes from run to run left out) and an example, how many builds and tests it
// hit and when, a strip of its builds per day (people would rather look than read), the tests it
// hit (links to their pages) and its builds, the latest first (links to the build pages, more on
// request). Data: GET /api/failure-groups/{id} (docs/tests.md).

import { h } from '../../ui/dom.js';
import { api, ApiError, type FailureGroupBuildRow, type FailureGroupPage, type FailureGroupTestRow } from './api.js';
import { dayLabel, daySeries, hitText, patternParts, type DayCount } from './failure-group-text.js';
import { buildUrl, failureGroupUrl, formatStart, plural, testsUrl } from './logic.js';
import type { PageContext } from './page.js';
import { svg, testLink } from './test-views.js';

/** Days the strip shows at most: a quarter, so that each day is a bar wide enough to see and point at. */
const STRIP_DAYS = 90;

function pattern(key: string): HTMLElement {
  return h(
    'h1',
    { id: 'group-title', class: 'group-pattern', title: 'The failure with what changes from run to run (numbers, paths, hashes, times, addresses) left out' },
    ...patternParts(key).map((p) => (p.placeholder ? h('span', { class: 'placeholder' }, p.text) : p.text)),
  );
}

/** One bar per UTC day, its height the builds the failure hit that day. */
function dayStrip(days: readonly DayCount[]): SVGSVGElement {
  const width = 900;
  const height = 96;
  const left = 34;
  const bottom = 20;
  const top = 6;
  const max = Math.max(1, ...days.map((d) => d.builds));
  const slot = (width - left) / days.length;
  const barHeight = (n: number) => (n / max) * (height - top - bottom);
  const bars = days.map((d, i) => {
    const x = left + i * slot + Math.min(1, slot * 0.15);
    const w = Math.max(1, slot - Math.min(2, slot * 0.3));
    const label = `${dayLabel(d.day)}: ${plural(d.builds, 'build')}`;
    return d.builds === 0
      ? svg('rect', { class: 'day none', x: x.toFixed(1), y: height - bottom - 1, width: w.toFixed(1), height: 1 }, svg('title', {}, label))
      : svg('rect', { class: 'day hit', x: x.toFixed(1), y: (height - bottom - barHeight(d.builds)).toFixed(1), width: w.toFixed(1), height: barHeight(d.builds).toFixed(1), 'data-day': dayLabel(d.day), 'data-builds': d.builds }, svg('title', {}, label));
  });
  const total = days.reduce((n, d) => n + d.builds, 0);
  return svg(
    'svg',
    { class: 'day-strip', id: 'group-days', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${plural(total, 'build')} with this failure over ${plural(days.length, 'day')}, ${dayLabel(days[0]!.day)} to ${dayLabel(days[days.length - 1]!.day)}, at most ${max} a day` },
    svg('line', { class: 'grid', x1: left, x2: width, y1: height - bottom, y2: height - bottom }),
    svg('text', { class: 'axis', x: left - 6, y: top + 10, 'text-anchor': 'end' }, String(max)),
    svg('text', { class: 'axis', x: left - 6, y: height - bottom, 'text-anchor': 'end' }, '0'),
    svg('text', { class: 'axis', x: left, y: height - 4, 'text-anchor': 'start' }, dayLabel(days[0]!.day)),
    svg('text', { class: 'axis', x: width, y: height - 4, 'text-anchor': 'end' }, dayLabel(days[days.length - 1]!.day)),
    ...bars,
  );
}

function testsTable(tests: readonly FailureGroupTestRow[], total: number): HTMLElement {
  if (tests.length === 0) return h('p', { class: 'muted', id: 'group-tests' }, 'No test: these are failures of the builds themselves.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'results failure-groups', id: 'group-tests' },
      h('thead', {}, h('tr', {}, ...['Test', 'Builds', 'Failures', 'Last seen'].map((c, i) => h('th', { scope: 'col', class: i === 0 ? '' : 'col-count' }, c)))),
      h(
        'tbody',
        {},
        ...tests.map((t) => h('tr', { 'data-test-id': String(t.testId) }, h('td', {}, testLink(t)), h('td', { class: 'num' }, t.builds.toLocaleString('en-US')), h('td', { class: 'num' }, t.failures.toLocaleString('en-US')), h('td', { class: 'nowrap' }, formatStart(t.lastSeen)))),
      ),
    ),
    total > tests.length ? h('p', { class: 'muted' }, `The ${tests.length} of ${total} tests it hit in most builds.`) : '',
  );
}

function buildRow(b: FailureGroupBuildRow): HTMLElement {
  const o = b.outcome ?? 'unknown';
  return h(
    'tr',
    { 'data-build-id': b.buildId },
    h('td', {}, h('span', { class: `outcome ${o}` }, o)),
    h('td', {}, h('a', { href: buildUrl(b.buildId), class: 'group-build' }, h('code', {}, b.buildId))),
    h('td', {}, b.project ?? ''),
    h('td', { class: 'nowrap' }, formatStart(b.startTime)),
    h('td', { class: 'num' }, b.failures.toLocaleString('en-US')),
    h('td', { class: 'num' }, b.tests.toLocaleString('en-US')),
  );
}

/** The builds, the latest start first; *More builds* reads the next page of the keyset and appends it. */
function buildsTable(ctx: PageContext, id: number, query: string, first: FailureGroupPage): HTMLElement {
  const body = h('tbody', {}, ...first.builds.map(buildRow));
  const more = h('button', { type: 'button', id: 'group-more' }, 'More builds');
  const status = h('span', { class: 'muted', role: 'status' });
  let next = first.next;
  more.hidden = next === null;
  more.addEventListener('click', async () => {
    if (next === null) return;
    more.disabled = true;
    status.textContent = 'Reading…';
    try {
      const page = await api.failureGroup(id, query, next, ctx.signal);
      body.append(...page.builds.map(buildRow));
      next = page.next;
      status.textContent = '';
    } catch (err) {
      if (ctx.signal.aborted) return;
      status.textContent = `Could not read more builds: ${(err as Error).message}`;
    }
    more.disabled = false;
    more.hidden = next === null;
  });
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'table-wrap' },
      h('table', { class: 'results', id: 'group-builds' }, h('thead', {}, h('tr', {}, ...['Outcome', 'Build', 'Project', 'Started', 'Failures', 'Tests'].map((c) => h('th', { scope: 'col' }, c)))), body),
    ),
    h('p', {}, more, ' ', status),
  );
}

function scopeLine(id: number, query: string): HTMLElement {
  if (query === '') return h('p', { class: 'muted group-scope' }, 'In all the builds you may see.');
  return h('p', { class: 'muted group-scope' }, 'In the builds that match ', h('code', { id: 'group-query' }, query), ' · ', h('a', { href: failureGroupUrl(id), id: 'group-all-builds' }, 'in all builds'));
}

export async function failureGroupPage(ctx: PageContext, id: number, query: string): Promise<void> {
  ctx.setTitle(`Failure group ${id}`);
  ctx.main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Reading the failure group…'));
  let d: FailureGroupPage;
  try {
    d = await api.failureGroup(id, query, null, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return;
    const missing = err instanceof ApiError && err.status === 404;
    ctx.main.replaceChildren(h('h1', {}, missing ? 'Failure group not found' : 'Could not read the failure group'), h('p', { class: 'error', role: 'alert', id: 'group-error' }, (err as Error).message), h('p', {}, h('a', { href: testsUrl(query) }, 'Tests and their failure groups')));
    ctx.ready();
    return;
  }
  if (ctx.signal.aborted) return;
  const g = d.group;
  ctx.setTitle(`${g.sample.slice(0, 60)} · Failure group`);
  // The builds are listed by start, so the first is the one last seen.
  const newest = d.builds[0];
  const latest = newest === undefined ? formatStart(g.lastSeen) : h('a', { href: buildUrl(newest.buildId), id: 'group-last-build' }, formatStart(g.lastSeen));
  const header = h(
    'section',
    { class: 'panel group-header', 'aria-labelledby': 'group-title' },
    h('p', { class: 'muted crumbs' }, h('a', { href: testsUrl(query) }, 'Tests'), ' · Failure group'),
    pattern(g.key),
    h('p', { class: 'group-example' }, h('span', { class: 'muted' }, 'For example: '), h('code', { id: 'group-sample' }, g.sample)),
    h('p', { id: 'group-stats' }, hitText(g.builds, g.tests, g.failures, d.buildFailures), g.builds > 0 ? h('span', {}, ` First seen ${formatStart(g.firstSeen)}, last seen `, latest, '.') : ''),
    scopeLine(id, query),
  );
  const series = daySeries(d.days, Date.now(), STRIP_DAYS);
  const when = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'days-heading' },
    h('h2', { id: 'days-heading' }, 'When it hit'),
    h('p', { class: 'muted card-question' }, `Builds with this failure per day (UTC), the last ${plural(series.length, 'day')} up to ${series.length > 0 ? dayLabel(series[series.length - 1]!.day) : ''}.`),
    d.days.length === 0 ? h('p', { class: 'muted', id: 'group-days' }, 'No build with this failure has a known start.') : h('div', { class: 'chart-wrap' }, dayStrip(series)),
  );
  const tests = h('section', { class: 'panel', 'aria-labelledby': 'group-tests-heading' }, h('h2', { id: 'group-tests-heading' }, `Tests (${g.tests.toLocaleString('en-US')})`), testsTable(d.tests, g.tests));
  const builds = h('section', { class: 'panel', 'aria-labelledby': 'group-builds-heading' }, h('h2', { id: 'group-builds-heading' }, `Builds (${g.builds.toLocaleString('en-US')}), latest first`), buildsTable(ctx, id, query, d));
  ctx.main.replaceChildren(header, when, h('div', { class: 'two-up' }, tests, builds));
  ctx.ready();
}
