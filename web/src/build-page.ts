// /builds/:id: one build. Header, requested tasks, failures, the task timeline, the slowest
// tasks, tags and custom values (each a link to its search), the attestations made from the build,
// environment, options, cache, and
// the raw events, paged and filterable by type. Builds without task events get all the rest.

import { h } from '../../ui/dom.js';
import { api, ApiError, type BuildDetails, type EventsPage } from './api.js';
import { buildsUrl, customValueTerm, formatDuration, formatStart, plural, term, toolLabel } from './logic.js';
import type { PageContext } from './page.js';
import { timeline } from './timeline.js';
import { consoleView, lineAnchor, lineOfHash } from './console-view.js';
import { failuresContent } from './failures-view.js';
import { testsView } from './tests-view.js';
import { compareLinks } from './compare-links.js';

const EVENTS_PER_PAGE = 50;

function section(id: string, title: string, ...content: (Node | string)[]): HTMLElement {
  return h('section', { class: 'panel', 'aria-labelledby': `${id}-heading`, id }, h('h2', { id: `${id}-heading` }, title), ...content);
}

function keyValues(values: Readonly<Record<string, unknown>>, empty: string): HTMLElement {
  const entries = Object.entries(values);
  if (entries.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    { class: 'kv' },
    h('tbody', {}, ...entries.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, typeof v === 'object' ? JSON.stringify(v) : String(v))))),
  );
}

export async function buildPage(ctx: PageContext, id: string): Promise<void> {
  ctx.setTitle(`Build ${id}`);
  ctx.main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Loading the build…'));
  let b: BuildDetails;
  try {
    b = await api.details(id, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) return;
    const message = err instanceof ApiError && err.status === 404 ? `There is no build ${id}, or you may not see it.` : `Could not load the build: ${(err as Error).message}`;
    ctx.main.replaceChildren(h('h1', {}, `Build ${id}`), h('p', { class: 'error', role: 'alert' }, message), h('a', { href: '/builds' }, 'All builds'));
    ctx.ready();
    return;
  }
  const outcome = b.outcome ?? 'unknown';
  const link = (field: string, value: string | null) => (value === null ? '' : h('a', { href: buildsUrl(term(field, value)) }, value));
  const header = h(
    'section',
    { class: 'panel build-header', 'aria-labelledby': 'build-title' },
    h('h1', { id: 'build-title' }, h('span', { class: `outcome ${outcome}` }, outcome), ' ', b.project ?? 'Build', ' ', h('code', { class: 'muted' }, b.id)),
    h(
      'dl',
      { class: 'facts' },
      ...(
        [
          ['Tool', `${toolLabel(b.tool)} ${b.toolVersion} (agent ${b.agentVersion})`],
          ['Project', link('project', b.project)],
          ['User', link('user', b.user)],
          ['Host', link('hostname', b.host)],
          ['Started', formatStart(b.start)],
          ['Duration', formatDuration(b.duration)],
        ] as [string, Node | string][]
      ).map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
    ),
    compareLinks(ctx, b),
  );
  const requested = section(
    'requested',
    'Requested tasks',
    h('p', {}, ...b.requested.map((r) => h('code', { class: 'task-name' }, r)), b.requested.length === 0 ? h('span', { class: 'muted' }, 'None recorded.') : ''),
    b.excluded.length > 0 ? h('p', { class: 'muted' }, 'Excluded: ', ...b.excluded.map((r) => h('code', { class: 'task-name' }, r))) : '',
  );
  // Why it failed comes first: failed tests, failures with their causes, the first error line.
  const failureCount = b.failures.length + b.tests.counts.failed;
  const failures = section('failures', failureCount === 0 ? 'Failures' : `Failures (${failureCount})`, ...failuresContent(b, lineAnchor));
  if (failureCount > 0) failures.classList.add('has-failures');
  const tests = section('tests', b.tests.counts.total === 0 ? 'Tests' : `Tests (${b.tests.counts.total.toLocaleString('en-US')})`);
  testsView(tests, b, ctx.signal);
  const consoleBox = section('console', 'Console log');
  const log = consoleView(consoleBox, b, ctx.signal);
  // In-page links (a console line, the tests) move within the page instead of drawing it again.
  ctx.main.addEventListener('click', (ev) => {
    const a = (ev.target as Element | null)?.closest('a');
    const href = a?.getAttribute('href');
    if (!href?.startsWith('#') || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
    ev.preventDefault();
    history.replaceState(history.state, '', href);
    const line = lineOfHash(href);
    if (line !== null) void log.showLine(line);
    else document.getElementById(href.slice(1))?.scrollIntoView({ block: 'start' });
  }, { signal: ctx.signal });

  const slowest = [...b.tasks].sort((x, y) => y.duration - x.duration).slice(0, 10);
  const tasks = section(
    'tasks',
    `Tasks (${b.tasks.length.toLocaleString('en-US')})`,
    b.tasks.length === 0 ? h('p', { class: 'muted' }, 'This build sent no task events.') : timeline(b.tasks),
    b.tasks.length === 0
      ? ''
      : h(
          'table',
          { class: 'results', id: 'slowest-tasks' },
          h('caption', {}, 'Slowest tasks'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Task'), h('th', { scope: 'col' }, 'Outcome'), h('th', { scope: 'col' }, 'Started'), h('th', { scope: 'col' }, 'Duration'))),
          h('tbody', {}, ...slowest.map((t) => h('tr', {}, h('td', {}, h('code', {}, t.path)), h('td', {}, h('span', { class: `task-outcome ${t.outcome}` }, t.outcome)), h('td', { class: 'num' }, `+${formatDuration(t.start)}`), h('td', { class: 'num' }, formatDuration(t.duration))))),
        ),
  );
  const tags = section(
    'tags',
    'Tags and custom values',
    h('p', {}, ...b.tags.map((t) => h('a', { href: buildsUrl(term('tag', t)), class: 'tag' }, t)), b.tags.length === 0 ? h('span', { class: 'muted' }, 'No tags.') : ''),
    b.values.length === 0
      ? h('p', { class: 'muted' }, 'No custom values.')
      : h('table', { class: 'kv' }, h('tbody', {}, ...b.values.map((v) => h('tr', {}, h('th', { scope: 'row' }, v.name), h('td', {}, h('a', { href: buildsUrl(customValueTerm(v.name, v.value)), class: 'value-link' }, v.value)))))),
  );
  const attestations = section(
    'attestations',
    'Attestations',
    b.attestations.length === 0
      ? h('p', { class: 'muted' }, 'No attestation cites this build.')
      : h(
          'table',
          { class: 'results', id: 'attestations-table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Package'), h('th', { scope: 'col' }, 'Digest'), h('th', { scope: 'col' }, 'Predicate'), h('th', { scope: 'col' }, 'Store'), h('th', { scope: 'col' }, 'Published'))),
          h(
            'tbody',
            {},
            ...b.attestations.map((a) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, a.packageUrl)),
                h('td', {}, h('code', { title: a.digest }, `${a.digest.slice(0, 19)}…`)),
                h('td', {}, h('a', { href: a.attestationUri, class: 'attestation-link' }, a.predicateType)),
                h('td', {}, a.store),
                h('td', {}, formatStart(a.publishedAt)),
              ),
            ),
          ),
        ),
  );
  const settings = h(
    'div',
    { class: 'two-up' },
    section('environment', 'Environment', keyValues(b.environment, 'No environment recorded.')),
    section('options', 'Build options', keyValues(b.options, 'No build options recorded.')),
    section(
      'cache',
      'Build cache',
      b.cache === null ? h('p', { class: 'muted' }, 'No cache settings recorded.') : keyValues(b.cache, ''),
      b.configurationCache !== null ? h('p', {}, `Configuration cache: ${b.configurationCache}`) : '',
    ),
    section('settings', 'Server settings', keyValues(b.serverSettings, 'No server settings recorded.')),
  );
  const events = section('events', `Raw events (${plural(Object.values(b.eventTypes).reduce((s, n) => s + n, 0), 'event')})`);
  ctx.main.replaceChildren(header, failures, requested, tests, consoleBox, tasks, tags, attestations, settings, events);
  ctx.ready();
  void rawEvents(events, b, ctx);
}

async function rawEvents(box: HTMLElement, b: BuildDetails, ctx: PageContext): Promise<void> {
  const select = h('select', { id: 'event-type' }, h('option', { value: '' }, 'All types'), ...Object.entries(b.eventTypes).map(([t, n]) => h('option', { value: t }, `${t} (${n})`)));
  const table = h('table', { class: 'results events', id: 'events-table' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of events' });
  const status = h('p', { class: 'muted', role: 'status' });
  box.append(h('label', { for: 'event-type' }, 'Type '), select, status, h('div', { class: 'table-wrap' }, table), pager);
  const show = async (offset: number) => {
    const types = select.value ? [select.value] : [];
    let page: EventsPage;
    try {
      page = await api.events(b.id, types, offset, EVENTS_PER_PAGE, ctx.signal);
    } catch (err) {
      if (!ctx.signal.aborted) status.textContent = `Could not load the events: ${(err as Error).message}`;
      return;
    }
    const origin = b.start ?? page.events[0]?.timestamp ?? 0;
    status.textContent = page.total === 0 ? 'No events.' : `Events ${offset + 1}–${offset + page.events.length} of ${page.total.toLocaleString('en-US')}`;
    table.replaceChildren(
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Data'))),
      h('tbody', {}, ...page.events.map((e) => h('tr', {}, h('td', { class: 'num' }, `+${formatDuration(e.timestamp - origin)}`), h('td', {}, e.type.eventType), h('td', {}, h('code', { class: 'event-data' }, JSON.stringify(e.data)))))),
    );
    const prev = h('button', { type: 'button', disabled: offset === 0 }, '« Previous');
    const next = h('button', { type: 'button', disabled: offset + EVENTS_PER_PAGE >= page.total, id: 'events-next' }, 'Next »');
    prev.addEventListener('click', () => void show(Math.max(0, offset - EVENTS_PER_PAGE)));
    next.addEventListener('click', () => void show(offset + EVENTS_PER_PAGE));
    pager.replaceChildren(prev, next);
  };
  select.addEventListener('change', () => void show(0));
  await show(0);
}
