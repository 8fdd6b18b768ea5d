// /trends?query=…: for the builds the query matches, per day or week in the viewer's time zone:
// builds by outcome (stacked; a click on a bar opens the builds list of that period), duration
// percentiles (p25–p75 band, p50 and p95 lines), failure rate, share of tasks avoided, the
// slowest and most often failing tasks, and the failure groups of the builds, each linking to its page. Charts are Chart.js, bundled (see docs/web.md).

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { h } from '../../ui/dom.js';
import { api, type TaskStat, type TrendBucket, type Trends } from './api.js';
import { buildsUrl, formatDuration, percent, periodQuery, plural, trendsUrl } from './logic.js';
import type { PageContext } from './page.js';
import { queryBar } from './query-bar.js';
import { failureGroupsTable } from './test-views.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Tooltip, Legend, Filler);

const DAY = 86_400_000;
/** Failure groups shown under the charts. */
const GROUPS = 10;

function chartBox(id: string, title: string, description: string): { box: HTMLElement; canvas: HTMLCanvasElement } {
  const canvas = h('canvas', { id, role: 'img', 'aria-label': description });
  const box = h('figure', { class: 'panel chart-box' }, h('figcaption', {}, title), h('div', { class: 'chart-area' }, canvas));
  return { box, canvas };
}

function taskTable(id: string, caption: string, rows: readonly TaskStat[], failing: boolean): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted', id }, failing ? 'No task failed in this period.' : 'No task events in this period.');
  return h(
    'table',
    { class: 'results', id },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...['Task', 'Runs', 'Failures', 'Mean', 'Longest'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...rows.map((r) => h('tr', {}, h('td', {}, h('code', {}, r.path)), h('td', { class: 'num' }, String(r.runs)), h('td', { class: 'num' }, String(r.failures)), h('td', { class: 'num' }, formatDuration(r.meanDuration)), h('td', { class: 'num' }, formatDuration(r.maxDuration)))),
    ),
  );
}

export async function trendsPage(ctx: PageContext, query: string, interval: 'day' | 'week', days: number): Promise<void> {
  ctx.setTitle('Trends');
  const content = h('div', { class: 'trends', 'aria-busy': 'true' });
  const bar = queryBar(
    query,
    (q, push) => ctx.navigate(trendsUrl(q, interval, days), !push),
    (valid) => content.classList.toggle('stale', !valid),
  );
  const intervalSelect = h('select', { id: 'interval' }, h('option', { value: 'day', selected: interval === 'day' }, 'per day'), h('option', { value: 'week', selected: interval === 'week' }, 'per week'));
  const rangeSelect = h('select', { id: 'range' }, ...[7, 30, 90, 365].map((d) => h('option', { value: String(d), selected: d === days }, `last ${d} days`)));
  intervalSelect.addEventListener('change', () => ctx.navigate(trendsUrl(query, intervalSelect.value as 'day' | 'week', days)));
  rangeSelect.addEventListener('change', () => ctx.navigate(trendsUrl(query, interval, Number(rangeSelect.value))));
  const controls = h(
    'div',
    { class: 'panel trend-controls' },
    h('label', { for: 'range' }, 'Range '),
    rangeSelect,
    ' ',
    h('label', { for: 'interval' }, 'Periods '),
    intervalSelect,
    ' ',
    h('a', { href: buildsUrl(query) }, 'List these builds'),
  );
  ctx.main.replaceChildren(bar.element, controls, content);

  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const to = Date.now();
  // The failure groups of the same builds: the query narrowed to the range, which their links keep.
  const groupQuery = periodQuery(query, to - days * DAY, to);
  const groups = api.failureGroups(groupQuery, GROUPS, ctx.signal);
  groups.catch(() => undefined);
  let trends: Trends;
  try {
    trends = await api.trends(query, to - days * DAY, to, interval, tz, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return;
    content.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Could not compute the trends: ${(err as Error).message}`));
    ctx.ready();
    return;
  }
  if (ctx.signal.aborted) return;
  render(content, trends, query, ctx, tz);
  const section = h('section', { class: 'panel', id: 'trend-groups-section', 'aria-labelledby': 'trend-groups-heading' }, h('h2', { id: 'trend-groups-heading' }, 'Failure groups'));
  content.append(section);
  try {
    const { groups: list } = await groups;
    if (ctx.signal.aborted) return;
    section.append(
      h('p', { class: 'muted card-question' }, `The failures these builds hit most: messages alike but for numbers, paths, hashes and times. The ${GROUPS} with most builds; each opens its page.`),
      h('div', { class: 'table-wrap' }, failureGroupsTable(list, groupQuery, 'trend-groups')),
    );
  } catch (err) {
    if (ctx.signal.aborted) return;
    section.append(h('p', { class: 'error', role: 'alert' }, `Could not read the failure groups: ${(err as Error).message}`));
  }
  content.setAttribute('aria-busy', 'false');
  ctx.ready();
}

function render(content: HTMLElement, t: Trends, query: string, ctx: PageContext, tz: string): void {
  const b = t.buckets;
  const labels = b.map((x) => x.label);
  const total = b.reduce((s, x) => s + x.builds, 0);
  const failed = b.reduce((s, x) => s + x.failed, 0);
  const decided = b.reduce((s, x) => s + x.succeeded + x.failed, 0);
  const hasTasks = b.some((x) => x.avoidedShare !== null);
  const summary = h('p', { class: 'summary', id: 'trend-summary' }, `${plural(total, 'build')} in ${plural(b.length, 'period')} (${tz}); failure rate ${percent(decided === 0 ? null : failed / decided)}.`);

  const outcomes = chartBox('chart-outcomes', 'Builds by outcome', `Builds per period by outcome; ${total} builds in all`);
  const durations = chartBox('chart-durations', 'Build duration', 'Duration percentiles per period: p25 to p75 band, p50 and p95 lines');
  const failures = chartBox('chart-failure-rate', 'Failure rate', 'Share of failed builds per period');
  const avoidance = chartBox('chart-avoidance', 'Tasks avoided', 'Share of tasks up-to-date or from the cache per period');
  const periods = h(
    'details',
    { class: 'panel' },
    h('summary', {}, 'Periods as a table'),
    h(
      'table',
      { class: 'results', id: 'periods-table' },
      h('thead', {}, h('tr', {}, ...['Period', 'Builds', 'Succeeded', 'Failed', 'p50', 'p95', 'Failure rate', 'Tasks avoided'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        ...b.map((x) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: buildsUrl(periodQuery(query, x.start, x.end)) }, x.label)),
            h('td', { class: 'num' }, String(x.builds)),
            h('td', { class: 'num' }, String(x.succeeded)),
            h('td', { class: 'num' }, String(x.failed)),
            h('td', { class: 'num' }, x.duration ? formatDuration(x.duration.p50) : ''),
            h('td', { class: 'num' }, x.duration ? formatDuration(x.duration.p95) : ''),
            h('td', { class: 'num' }, percent(x.failureRate)),
            h('td', { class: 'num' }, percent(x.avoidedShare)),
          ),
        ),
      ),
    ),
  );
  content.replaceChildren(
    summary,
    h('div', { class: 'chart-grid' }, outcomes.box, durations.box, failures.box, hasTasks ? avoidance.box : h('p', { class: 'muted panel' }, 'No task events: task avoidance cannot be shown.')),
    periods,
    h('div', { class: 'two-up' }, h('section', { class: 'panel' }, h('h2', {}, 'Slowest tasks'), taskTable('slowest-table', 'Tasks with the longest mean duration', t.slowestTasks, false)), h('section', { class: 'panel' }, h('h2', {}, 'Failing tasks'), taskTable('failing-table', 'Tasks that failed most often', t.failingTasks, true))),
  );

  const css = getComputedStyle(document.documentElement);
  const colour = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const grid = { color: 'rgba(128,128,128,0.2)' };
  const common = { responsive: true, maintainAspectRatio: false, animation: false as const, interaction: { mode: 'index' as const, intersect: false } };
  const openPeriod = (i: number) => {
    const x = b[i];
    if (x) ctx.navigate(buildsUrl(periodQuery(query, x.start, x.end)));
  };
  const outcomesChart = new Chart(outcomes.canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'succeeded', data: b.map((x) => x.succeeded), backgroundColor: colour('--succeeded', '#2e9e5b'), stack: 'o' },
        { label: 'failed', data: b.map((x) => x.failed), backgroundColor: colour('--failed', '#d2453b'), stack: 'o' },
        { label: 'unknown', data: b.map((x) => x.unknown), backgroundColor: colour('--unknown', '#9aa4af'), stack: 'o' },
      ],
    },
    options: {
      ...common,
      scales: { x: { stacked: true, grid }, y: { stacked: true, beginAtZero: true, grid, title: { display: true, text: 'builds' } } },
      onClick: (_ev, elements) => {
        if (elements[0]) openPeriod(elements[0].index);
      },
      onHover: (ev, elements) => {
        const target = ev.native?.target as HTMLElement | undefined;
        if (target) target.style.cursor = elements.length > 0 ? 'pointer' : 'default';
      },
    },
  } satisfies ChartConfiguration<'bar'>);
  const ms = (f: (x: TrendBucket) => number | undefined) => b.map((x) => (x.duration ? (f(x) ?? null) : null));
  const seconds = (v: number | string) => formatDuration(Number(v));
  new Chart(durations.canvas, {
    type: 'line',
    data: {
      labels,
      datasets: [
        { label: 'p25', data: ms((x) => x.duration?.p25), borderColor: 'rgba(59,125,216,0.3)', pointRadius: 0, fill: false },
        { label: 'p25–p75', data: ms((x) => x.duration?.p75), borderColor: 'rgba(59,125,216,0.3)', backgroundColor: 'rgba(59,125,216,0.18)', pointRadius: 0, fill: '-1' },
        { label: 'p50', data: ms((x) => x.duration?.p50), borderColor: '#3b7dd8', borderWidth: 2, pointRadius: 2 },
        { label: 'p95', data: ms((x) => x.duration?.p95), borderColor: '#b35c00', borderDash: [5, 3], pointRadius: 2 },
      ],
    },
    options: { ...common, spanGaps: true, scales: { x: { grid }, y: { beginAtZero: true, grid, ticks: { callback: seconds } } }, plugins: { legend: { labels: { filter: (item) => item.text !== 'p25' } }, tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${formatDuration(Number(c.parsed.y))}` } } } },
  });
  new Chart(failures.canvas, {
    type: 'line',
    data: { labels, datasets: [{ label: 'failure rate', data: b.map((x) => (x.failureRate === null ? null : x.failureRate * 100)), borderColor: colour('--failed', '#d2453b'), pointRadius: 2 }] },
    options: { ...common, spanGaps: true, scales: { x: { grid }, y: { beginAtZero: true, max: 100, grid, ticks: { callback: (v) => `${v}%` } } } },
  });
  if (hasTasks) {
    new Chart(avoidance.canvas, {
      type: 'line',
      data: { labels, datasets: [{ label: 'tasks avoided (up-to-date or from cache)', data: b.map((x) => (x.avoidedShare === null ? null : x.avoidedShare * 100)), borderColor: colour('--succeeded', '#2e9e5b'), pointRadius: 2 }] },
      options: { ...common, spanGaps: true, scales: { x: { grid }, y: { beginAtZero: true, max: 100, grid, ticks: { callback: (v) => `${v}%` } } } },
    });
  }
  // Charts hold their canvas and listeners: let them go with the page.
  ctx.signal.addEventListener('abort', () => {
    for (const c of Object.values(Chart.instances)) c.destroy();
  });
  // Tests find the bars' positions through this.
  (window as unknown as { buildscopeCharts?: unknown }).buildscopeCharts = { outcomes: outcomesChart };
}
