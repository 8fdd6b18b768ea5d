// /tests/<id>: one test over time. Its verdict and the builds that are its evidence, its failure
// probability, its outcome history as a strip (one cell per run, oldest first, each a link to its
// build), its duration over time (an SVG chart) and its failure groups, each linking to its page. Data: GET
// /api/tests/{id}/history (docs/tests.md).

import { h } from '../../ui/dom.js';
import { api, type FailureGroupRow, type TestHistory, type TestRunRow, type Verdict } from './api.js';
import { buildsUrl, buildUrl, formatDuration, formatStart, plural, term, testsUrl, toolLabel } from './logic.js';
import type { PageContext } from './page.js';
import { attemptsText, estimateText, evidenceText, niceMax, verdictSentence } from './test-text.js';
import { estimateView, groupLink, svg, verdictBadge } from './test-views.js';

interface Ref {
  readonly buildId: string;
  readonly startTime: number | null;
}

function buildRef(b: Ref): HTMLElement {
  return h('span', { class: 'build-ref' }, h('a', { href: buildUrl(b.buildId), class: 'evidence-build' }, h('code', {}, b.buildId)), b.startTime !== null ? h('span', { class: 'muted' }, ` ${formatStart(b.startTime)}`) : '');
}

/** The builds behind the verdict, as links. */
function evidence(v: Verdict): HTMLElement {
  const items: HTMLElement[] = [];
  switch (v.kind) {
    case 'flaky':
      for (const e of v.evidence.slice(0, 12)) {
        switch (e.kind) {
          case 'retried':
            items.push(h('li', {}, `${evidenceText(e)} `, buildRef(e.build)));
            break;
          case 'same-commit':
            items.push(h('li', {}, `${evidenceText(e)} failed in `, buildRef(e.failed), ', passed in ', buildRef(e.passed)));
            break;
          case 'intermittent':
            items.push(h('li', {}, `${evidenceText(e)} `, ...e.failedBuilds.slice(0, 8).flatMap((b, i) => [i > 0 ? ', ' : '', buildRef(b)])));
            break;
        }
      }
      if (v.evidence.length > 12) items.push(h('li', { class: 'muted' }, `and ${plural(v.evidence.length - 12, 'more')}`));
      break;
    case 'broken':
      items.push(h('li', {}, 'Failing since ', buildRef(v.since), ` (${plural(v.failedRuns, 'failed build')})`));
      if (v.lastPassed !== null) items.push(h('li', {}, 'Last passed in ', buildRef(v.lastPassed)));
      break;
    case 'regressed':
      items.push(h('li', {}, 'Failing since ', buildRef(v.since)), h('li', {}, 'Last passed in ', buildRef(v.lastPassed)));
      break;
    case 'passing':
    case 'no-runs':
      break;
  }
  return h('div', { class: 'verdict-box', id: 'test-verdict' }, h('p', {}, verdictBadge(v.kind), ' ', verdictSentence(v)), items.length > 0 ? h('ul', { class: 'evidence', id: 'test-evidence' }, ...items) : '');
}

function runTitle(r: TestRunRow): string {
  return `${r.outcome}${r.attempt > 1 ? ` (attempt ${r.attempt})` : ''}, ${formatDuration(r.durationMs)}, build ${r.buildId}${r.startTime !== null ? `, ${formatStart(r.startTime)}` : ''}`;
}

/** One cell per run, oldest first, coloured by outcome, each a link to its build. */
function strip(runs: readonly TestRunRow[]): HTMLElement {
  const cells = runs.map((r, i) => {
    // A retry sits right after the attempt before it, in the same build.
    const sameBuild = i > 0 && runs[i - 1]!.seq === r.seq;
    return h('a', { href: buildUrl(r.buildId), class: `run-cell ${r.outcome}${sameBuild ? ' retry' : ''}`, title: runTitle(r), 'aria-label': runTitle(r), 'data-build-id': r.buildId });
  });
  return h('div', { class: 'run-strip', id: 'run-strip', role: 'list', 'aria-label': 'Runs, oldest first' }, ...cells);
}

/** The duration of each run over time: a dot per run, coloured by outcome, on a time axis. */
function durationChart(runs: readonly TestRunRow[]): SVGSVGElement {
  const width = 900;
  const height = 190;
  const left = 58;
  const right = 12;
  const top = 10;
  const bottom = 26;
  const timed = runs.every((r) => r.startTime !== null);
  const xs = runs.map((r, i) => (timed ? r.startTime! : i));
  // The line in time order; the failed runs drawn last, over a retry of the same duration.
  const order = runs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]! || a - b);
  const painted = [...order].sort((a, b) => Number(runs[a]!.outcome === 'failed') - Number(runs[b]!.outcome === 'failed'));
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const max = niceMax(Math.max(...runs.map((r) => r.durationMs)));
  const x = (v: number) => left + (x1 === x0 ? (width - left - right) / 2 : ((v - x0) / (x1 - x0)) * (width - left - right));
  const y = (ms: number) => top + (1 - ms / max) * (height - top - bottom);
  const grid = [0, max / 2, max].map((v) =>
    svg('g', {}, svg('line', { class: 'grid', x1: left, x2: width - right, y1: y(v), y2: y(v) }), svg('text', { class: 'axis', x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v === 0 ? '0' : formatDuration(v))),
  );
  const label = (v: number) => (timed ? formatStart(v).slice(0, 10) : `run ${v + 1}`);
  const ticks = [svg('text', { class: 'axis', x: left, y: height - 6, 'text-anchor': 'start' }, label(x0)), svg('text', { class: 'axis', x: width - right, y: height - 6, 'text-anchor': 'end' }, label(x1))];
  const points = order.map((i) => `${x(xs[i]!).toFixed(1)},${y(runs[i]!.durationMs).toFixed(1)}`).join(' ');
  const dots = painted.map((i) => {
    const r = runs[i]!;
    return svg('circle', { class: `dot ${r.outcome}`, cx: x(xs[i]!).toFixed(1), cy: y(r.durationMs).toFixed(1), r: r.outcome === 'failed' ? 4 : 3.2 }, svg('title', {}, runTitle(r)));
  });
  return svg(
    'svg',
    { class: 'duration-chart', id: 'duration-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `Duration of ${runs.length} runs over time, 0 to ${formatDuration(max)}` },
    ...grid,
    ...ticks,
    svg('polyline', { class: 'trace', points }),
    ...dots,
  );
}

function groups(list: readonly FailureGroupRow[]): HTMLElement {
  if (list.length === 0) return h('p', { class: 'muted' }, 'It has not failed in the builds you may see.');
  return h(
    'table',
    { class: 'results failure-groups', id: 'test-groups' },
    h('thead', {}, h('tr', {}, ...['Failure', 'Builds', 'Failures', 'First seen', 'Last seen'].map((c, i) => h('th', { scope: 'col', class: i === 0 ? '' : 'col-count' }, c)))),
    h(
      'tbody',
      {},
      ...list.map((g) =>
        h(
          'tr',
          { 'data-group-id': String(g.groupId) },
          h('td', {}, groupLink(g, '')),
          h('td', { class: 'num' }, g.builds.toLocaleString('en-US')),
          h('td', { class: 'num' }, g.failures.toLocaleString('en-US')),
          h('td', { class: 'nowrap' }, formatStart(g.firstSeen)),
          h('td', { class: 'nowrap' }, formatStart(g.lastSeen)),
        ),
      ),
    ),
  );
}

function legend(runs: readonly TestRunRow[]): HTMLElement {
  const n = (o: TestRunRow['outcome']) => runs.filter((r) => r.outcome === o).length;
  const item = (o: TestRunRow['outcome']) => h('span', { class: 'legend-item' }, h('span', { class: `run-cell ${o} swatch` }), `${n(o).toLocaleString('en-US')} ${o}`);
  return h('p', { class: 'legend' }, item('passed'), item('failed'), item('skipped'));
}

/** The builds of the test's project, and those where it failed or was flaky (the failedTest and flakyTest fields). */
function buildLinks(key: string, projectQuery: string, project: string | null): HTMLElement {
  const within = (q: string) => (projectQuery === '' ? q : `${projectQuery} ${q}`);
  return h(
    'p',
    { class: 'test-builds' },
    h('a', { href: buildsUrl(within(term('failedTest', key))), id: 'test-failed-builds' }, 'Builds where it failed'),
    ' · ',
    h('a', { href: buildsUrl(within(term('flakyTest', key))), id: 'test-flaky-builds' }, 'Builds where it was flaky'),
    project !== null ? ' · ' : '',
    project !== null ? h('a', { href: buildsUrl(projectQuery) }, `Builds of ${project}`) : '',
  );
}

export async function testPage(ctx: PageContext, id: number): Promise<void> {
  ctx.setTitle(`Test ${id}`);
  ctx.main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Reading the test…'));
  let t: TestHistory;
  try {
    t = await api.testHistory(id, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return;
    ctx.main.replaceChildren(h('h1', {}, 'Test not found'), h('p', { class: 'error', role: 'alert', id: 'test-error' }, (err as Error).message), h('p', {}, h('a', { href: '/tests' }, 'All tests')));
    ctx.ready();
    return;
  }
  if (ctx.signal.aborted) return;
  const { test, runs, verdict, estimate } = t;
  ctx.setTitle(`${test.name} · Tests`);
  const builds = new Set(runs.map((r) => r.seq)).size;
  const projectQuery = test.project === null ? '' : term('project', test.project);
  const header = h(
    'section',
    { class: 'panel test-header', 'aria-labelledby': 'test-title' },
    h('p', { class: 'muted crumbs' }, h('a', { href: testsUrl(projectQuery) }, test.project === null ? 'Tests' : `Tests of ${test.project}`), ` · ${toolLabel(test.tool)}`),
    h('h1', { id: 'test-title' }, test.suite === '' ? '' : h('span', { class: 'test-suite' }, `${test.suite} `), h('span', {}, test.name), test.parameters ? h('span', { class: 'muted' }, ` [${test.parameters}]`) : ''),
    h(
      'div',
      { class: 'test-stat' },
      estimateView(estimate, verdict.kind),
      h('span', { id: 'test-estimate' }, `Fails ${estimateText(estimate)} of its attempts: ${attemptsText(estimate)} in ${plural(builds, 'build')}.`),
    ),
    evidence(verdict),
    buildLinks(test.suite === '' ? test.name : `${test.suite}.${test.name}`, projectQuery, test.project),
  );
  const history = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'history-heading' },
    h('h2', { id: 'history-heading' }, 'Outcome of each run'),
    h('p', { class: 'muted card-question' }, `The latest ${plural(runs.length, 'run')}, oldest first; each links to its build (a retry sits next to the attempt it repeated).`),
    legend(runs),
    runs.length === 0 ? h('p', { class: 'muted' }, 'No runs.') : strip(runs),
  );
  const duration = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'duration-heading' },
    h('h2', { id: 'duration-heading' }, 'Duration over time'),
    runs.length === 0 ? h('p', { class: 'muted' }, 'No runs.') : h('div', { class: 'chart-wrap' }, durationChart(runs)),
  );
  const failures = h('section', { class: 'panel', 'aria-labelledby': 'groups-heading' }, h('h2', { id: 'groups-heading' }, 'Its failures, grouped'), h('div', { class: 'table-wrap' }, groups(t.failureGroups)));
  ctx.main.replaceChildren(header, history, duration, failures);
  ctx.ready();
}
