// /compare/<a>/<b>: two builds side by side (GET /api/builds/{a}/compare/{b}). The headers in
// two columns, the summary first, then each section (what was asked, tasks, dependencies, tests, failures)
// open when it has differences and collapsed, marked identical, when it has none. Long lists
// show their first rows and a button for the rest.

import { h } from '../../ui/dom.js';
import type { BuildSide, Comparison, Difference, DifferenceKind, Section, SectionId } from '../../src/services/web-api.js';
import { ApiError, getJson } from './api.js';
import { durationChange, inputsReasons, summaryLabel, summaryLine, word } from './compare-text.js';
import { buildUrl, formatDuration, formatStart, plural, toolLabel } from './logic.js';
import type { PageContext } from './page.js';

const FIRST_ROWS = 50;

export function compareUrl(a: string, b: string): string {
  return `/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
}

const SECTION_TITLES: Readonly<Record<SectionId, string>> = {
  header: 'Header and counts',
  asked: 'What was asked',
  tasks: 'Tasks',
  dependencies: 'Dependencies',
  tests: 'Tests',
  failures: 'Failures',
};

/** The lists a section's differences fall into, in the order they are shown. */
const GROUPS: readonly { readonly title: string; readonly kinds: readonly DifferenceKind[] }[] = [
  { title: 'Values', kinds: ['field', 'list'] },
  { title: 'Only in one build', kinds: ['task-added', 'task-removed', 'test-added', 'test-removed', 'failure-added', 'failure-removed'] },
  { title: 'Outcome changes', kinds: ['task-outcome', 'test-outcome'] },
  { title: 'Resolved differently', kinds: ['dependency'] },
  { title: 'Cache keys that differ, and why', kinds: ['task-inputs'] },
  { title: 'Cacheable changes', kinds: ['task-cacheable'] },
  { title: 'Duration changes, largest first', kinds: ['task-duration', 'test-duration'] },
];

export async function comparePage(ctx: PageContext, a: string, b: string): Promise<void> {
  ctx.setTitle(`Compare ${a} with ${b}`);
  ctx.main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Comparing the builds…'));
  let c: Comparison;
  try {
    c = await getJson<Comparison>(`/api/builds/${encodeURIComponent(a)}/compare/${encodeURIComponent(b)}`, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return;
    const message = err instanceof ApiError && err.status === 404 ? `${err.message}. One of the builds does not exist, or you may not see it.` : `Could not compare the builds: ${(err as Error).message}`;
    ctx.main.replaceChildren(h('h1', {}, 'Compare builds'), h('p', { class: 'error', role: 'alert', id: 'compare-error' }, message), h('a', { href: '/builds' }, 'All builds'));
    ctx.ready();
    return;
  }
  const title = h('h1', { id: 'compare-title' }, 'Compare builds');
  ctx.main.replaceChildren(
    h('section', { class: 'panel', 'aria-labelledby': 'compare-title' }, title, headers(c), h('p', {}, h('a', { href: compareUrl(b, a), id: 'compare-swap' }, 'Swap the builds'))),
    summary(c),
    ...c.sections.map(section),
  );
  ctx.ready();
}

function headers(c: Comparison): HTMLElement {
  const rows: [string, (s: BuildSide) => Node | string][] = [
    ['Build', (s) => h('a', { href: buildUrl(s.id), class: 'build-link' }, h('code', {}, s.id))],
    ['Outcome', (s) => h('span', { class: `outcome ${s.outcome ?? 'unknown'}` }, s.outcome ?? 'unknown')],
    ['Project', (s) => s.project ?? ''],
    ['Tool', (s) => `${toolLabel(s.tool)} ${s.toolVersion}`],
    ['Agent', (s) => s.agentVersion],
    ['Started', (s) => formatStart(s.start)],
    ['Duration', (s) => formatDuration(s.duration)],
    ['User', (s) => s.user ?? ''],
    ['Host', (s) => s.host ?? ''],
    ['CI', (s) => (s.ciBuild !== null && /^https?:\/\//.test(s.ciBuild) ? h('a', { href: s.ciBuild, rel: 'noreferrer', target: '_blank' }, s.ciProvider ?? 'CI build') : (s.ciProvider ?? ''))],
    ['Git branch', (s) => s.gitBranch ?? ''],
    ['Git commit', (s) => (s.gitCommit === null ? '' : h('code', {}, s.gitCommit))],
    ['Tasks', (s) => s.tasks.toLocaleString('en-US')],
    ['Tests', (s) => s.tests.toLocaleString('en-US')],
  ];
  const text = (n: Node | string) => (typeof n === 'string' ? n : (n.textContent ?? ''));
  const change = c.a.duration !== null && c.b.duration !== null ? durationChange(c.a.duration, c.b.duration) : '';
  return h(
    'table',
    { class: 'results compare-headers', id: 'compare-headers' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), h('th', { scope: 'col' }, 'A'), h('th', { scope: 'col' }, 'B'))),
    h(
      'tbody',
      {},
      ...rows.map(([label, value]) => {
        const va = value(c.a);
        const vb = value(c.b);
        const differs = label !== 'Build' && label !== 'Started' && label !== 'CI' && text(va) !== text(vb);
        return h(
          'tr',
          { class: differs ? 'differs' : undefined },
          h('th', { scope: 'row' }, label),
          h('td', {}, va),
          h('td', {}, vb, label === 'Duration' && change !== '' && differs ? h('span', { class: 'change' }, ` (${change})`) : ''),
        );
      }),
    ),
  );
}

function summary(c: Comparison): HTMLElement {
  const box = h('section', { class: 'panel compare-summary', id: 'compare-summary', 'aria-labelledby': 'compare-summary-heading' }, h('h2', { id: 'compare-summary-heading' }, 'Summary'));
  if (c.identical) {
    box.append(h('p', {}, 'No differences: the builds asked for the same and did the same.'));
    return box;
  }
  if (c.summary.length === 0) {
    box.append(h('p', { class: 'muted' }, 'Nothing that explains a different outcome or duration; the differences are listed below.'));
    return box;
  }
  box.append(h('ul', { class: 'summary-list' }, ...c.summary.map((e) => h('li', { 'data-reason': e.reason }, h('span', { class: `reason ${e.reason}` }, summaryLabel(e)), ' ', summaryLine(e)))));
  return box;
}

function section(s: Section): HTMLElement {
  const n = s.differences.length;
  const identical = n === 0;
  const heading = `${SECTION_TITLES[s.id]}${identical ? ': identical' : ` (${plural(n, 'difference')})`}`;
  const box = h('details', { class: `panel compare-section${identical ? ' identical' : ''}`, id: `compare-${s.id}`, open: !identical }, h('summary', {}, h('h2', {}, heading)));
  if (identical) {
    box.append(h('p', { class: 'muted' }, `${plural(s.compared, 'item')} compared, none differs.`));
    return box;
  }
  for (const g of GROUPS) {
    const list = s.differences.filter((d) => g.kinds.includes(d.kind));
    if (list.length > 0) box.append(differenceTable(g.title, list));
  }
  return box;
}

function differenceTable(title: string, list: readonly Difference[]): HTMLElement {
  const body = h('tbody', {});
  const rowOf = (d: Difference) => {
    const w = word(d);
    // A task's cache key: the inputs that made it differ, under the task's name.
    const why = d.kind === 'task-inputs' ? h('ul', { class: 'input-changes' }, ...inputsReasons(d).map((line) => h('li', {}, line))) : '';
    const missed = d.kind === 'task-inputs' && d.missed ? h('span', { class: 'reason cache-miss' }, 'cache miss') : '';
    return h('tr', { 'data-kind': d.kind }, h('td', {}, h('code', {}, w.subject), ' ', missed, why), h('td', {}, w.before), h('td', {}, w.after), h('td', { class: 'num' }, w.change));
  };
  const show = (count: number) => body.replaceChildren(...list.slice(0, count).map(rowOf));
  show(FIRST_ROWS);
  const more = list.length > FIRST_ROWS ? h('button', { type: 'button', class: 'show-all' }, `Show all ${list.length.toLocaleString('en-US')}`) : '';
  if (more !== '') {
    more.addEventListener('click', () => {
      show(list.length);
      more.remove();
    });
  }
  return h(
    'div',
    { class: 'compare-group' },
    h(
      'table',
      { class: 'results compare-table' },
      h('caption', {}, `${title} (${list.length.toLocaleString('en-US')})`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), h('th', { scope: 'col' }, 'A'), h('th', { scope: 'col' }, 'B'), h('th', { scope: 'col' }, 'Change'))),
      body,
    ),
    more,
  );
}
