// /builds?query=…: the query editor, the exact number of matches, facets that add a term when
// clicked, and the matching builds newest first, one keyset page at a time (`after` in the
// address). Arrow keys (or j/k) move between the rows; Enter opens the build.

import { h } from '../../ui/dom.js';
import { api, type Facets, type ListRow } from './api.js';
import { addTerm, buildUrl, buildsUrl, formatDuration, formatStart, plural, term, testsUrl, toolLabel, toolName, trendsUrl } from './logic.js';
import { queryBar } from './query-bar.js';
import { compareSelection } from './compare-links.js';
import type { PageContext } from './page.js';

export const PAGE_SIZE = 50;

const COLUMNS: readonly (readonly [string, string])[] = [
  ['Outcome', 'outcome'],
  ['Build', 'build'],
  ['Tool', 'tool'],
  ['Project', 'project'],
  ['Requested', 'requested'],
  ['User', 'user'],
  ['Host', 'host'],
  ['Started', 'started'],
  ['Duration', 'duration'],
  ['Tags', 'tags'],
];

const FACET_LABELS: Readonly<Record<keyof Facets, string>> = {
  buildOutcome: 'Outcome',
  buildTool: 'Build tool',
  project: 'Project',
  user: 'User',
  tag: 'Tag',
};

function outcomeBadge(outcome: string | null): HTMLElement {
  const o = outcome ?? 'unknown';
  return h('span', { class: `outcome ${o}` }, o);
}

export async function listPage(ctx: PageContext, query: string, after: string | null): Promise<void> {
  const results = h('section', { class: 'panel results-panel', 'aria-labelledby': 'results-heading', 'aria-busy': 'true' });
  const stale = h('p', { class: 'stale-note', role: 'status', hidden: true }, 'The query has problems: the builds below are those of the last valid query.');
  const bar = queryBar(
    query,
    (q, push) => ctx.navigate(buildsUrl(q), !push),
    (valid) => {
      results.classList.toggle('stale', !valid);
      stale.hidden = valid;
    },
  );
  const count = h('p', { class: 'count', id: 'match-count', role: 'status', 'aria-live': 'polite' }, 'Counting…');
  const facetsBox = h('aside', { class: 'panel facets', 'aria-label': 'Facets' }, h('h2', {}, 'Refine'));
  const table = h('table', { class: 'results builds-table', id: 'builds-table' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of builds' });
  results.append(
    h('div', { class: 'results-head' }, h('h2', { id: 'results-heading' }, 'Builds'), count, h('a', { href: trendsUrl(query), class: 'trends-link' }, 'Trends of these builds'), h('a', { href: testsUrl(query), class: 'tests-link' }, 'Their tests')),
    stale,
    h('div', { class: 'table-wrap' }, table),
    pager,
  );
  ctx.main.replaceChildren(bar.element, h('div', { class: 'list-layout' }, facetsBox, results));
  ctx.setTitle('Builds');

  const signal = ctx.signal;
  const [page, total, facets] = await Promise.allSettled([api.list(query, after, PAGE_SIZE, signal), api.count(query, signal), api.facets(query, signal)]);
  if (signal.aborted) return;
  if (page.status === 'rejected') {
    results.setAttribute('aria-busy', 'false');
    count.textContent = '';
    table.replaceWith(h('p', { class: 'error', role: 'alert' }, `Could not list the builds: ${(page.reason as Error).message}`));
    return;
  }
  count.textContent = total.status === 'fulfilled' ? `${plural(total.value.count, 'build')} match${total.value.count === 1 ? 'es' : ''}` : 'Could not count the matches';
  renderTable(table, page.value.builds, ctx);
  compareSelection(ctx, table, page.value.builds, results.querySelector('.results-head')!);
  pager.replaceChildren(
    after !== null ? h('a', { href: buildsUrl(query), class: 'pager-link' }, '« Newest') : '',
    page.value.next !== null ? h('a', { href: buildsUrl(query, page.value.next), class: 'pager-link', rel: 'next', id: 'older-link' }, 'Older builds »') : '',
  );
  if (facets.status === 'fulfilled') renderFacets(facetsBox, facets.value, query, ctx);
  results.setAttribute('aria-busy', 'false');
  ctx.ready();
}

function renderFacets(box: HTMLElement, facets: Facets, query: string, ctx: PageContext): void {
  const groups = (Object.keys(FACET_LABELS) as (keyof Facets)[]).map((field) => {
    const values = facets[field];
    if (values.length === 0) return '';
    return h(
      'section',
      { class: 'facet', 'data-facet': field },
      h('h3', {}, FACET_LABELS[field]),
      h(
        'ul',
        {},
        ...values.map((v) =>
          h('li', {}, h('a', { href: buildsUrl(addTerm(query, term(field, v.value))), class: 'facet-link', 'data-value': v.value }, h('span', {}, field === 'buildTool' ? toolLabel(v.value) : v.value), h('span', { class: 'facet-count' }, v.count.toLocaleString('en-US')))),
        ),
      ),
    );
  });
  box.replaceChildren(h('h2', {}, 'Refine'), ...groups);
  void ctx;
}

function renderTable(table: HTMLTableElement, builds: readonly ListRow[], ctx: PageContext): void {
  const head = h(
    'thead',
    {},
    // Each header names its column's class: the table's layout is fixed (web/styles.css), so these
    // widths hold whatever the rows say; long texts end in an ellipsis (their whole text in the
    // title) and the tags wrap, so every column stays within the panel.
    h('tr', {}, ...COLUMNS.map(([c, cls]) => h('th', { scope: 'col', class: `col-${cls}` }, c))),
  );
  const body = h(
    'tbody',
    {},
    ...builds.map((b) =>
      h(
        'tr',
        { 'data-build-id': b.id },
        h('td', {}, outcomeBadge(b.outcome)),
        h('td', {}, h('a', { href: buildUrl(b.id), class: 'build-link' }, h('code', {}, b.id))),
        h('td', { title: `${b.tool} ${b.toolVersion}` }, `${toolName(b.tool)} ${b.toolVersion}`),
        h('td', { title: b.project ?? '' }, b.project ?? ''),
        h('td', { class: 'requested', title: b.requested.join(' ') }, b.requested.join(' ')),
        h('td', { title: b.user ?? '' }, b.user ?? ''),
        h('td', { class: 'host', title: b.host ?? '' }, b.host ?? ''),
        h('td', { class: 'nowrap' }, formatStart(b.start)),
        h('td', { class: 'num' }, formatDuration(b.duration)),
        h('td', { class: 'tags' }, ...b.tags.map((t) => h('a', { href: buildsUrl(term('tag', t)), class: 'tag' }, t))),
      ),
    ),
  );
  if (builds.length === 0) body.append(h('tr', {}, h('td', { colspan: '10', class: 'muted' }, 'No builds match.')));
  table.replaceChildren(h('caption', { class: 'visually-hidden' }, 'Matching builds, newest first'), head, body);
  // Keyboard: ↓/↑ (or j/k) move between the builds' links, Home/End to the first and last.
  body.addEventListener('keydown', (ev) => {
    const links = [...body.querySelectorAll<HTMLAnchorElement>('a.build-link')];
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    const row = (document.activeElement as HTMLElement | null)?.closest('tr');
    const rowIndex = row ? [...body.rows].indexOf(row as HTMLTableRowElement) : at;
    let next = -1;
    if (ev.key === 'ArrowDown' || ev.key === 'j') next = Math.min(links.length - 1, rowIndex + 1);
    else if (ev.key === 'ArrowUp' || ev.key === 'k') next = Math.max(0, rowIndex - 1);
    else if (ev.key === 'Home') next = 0;
    else if (ev.key === 'End') next = links.length - 1;
    if (next < 0 || links.length === 0) return;
    ev.preventDefault();
    links[next]!.focus();
  });
  void ctx;
}
