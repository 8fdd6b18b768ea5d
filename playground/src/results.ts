// The results: a table of matching builds and the per-day chart, plus the build detail dialog
// (attributes and events, fetched with the signed-in key).

import { buildPath, eventsPath, getBuild, getEvents, type BuildRow } from './api.js';
import { renderChart } from './chart.js';
import { outcomeOf, type DayCount } from './chart-data.js';
import { byId, h } from '../../ui/dom.js';
import { formatDuration, formatTime, text } from '../../ui/format.js';
import { NAMED_FIELDS } from '../../src/query/catalog.js';

const EVENT_LIMIT = 2000;

function projectOf(b: BuildRow): string {
  return text(b.attributes?.[NAMED_FIELDS.project.name]);
}

export function renderResults(builds: readonly BuildRow[]): void {
  const table = byId<HTMLTableElement>('results-table');
  const body = table.tBodies[0]!;
  body.replaceChildren(
    ...builds.map((b) => {
      const a = b.attributes ?? {};
      const outcome = outcomeOf(a[NAMED_FIELDS.buildOutcome.name]);
      const idLink = h('a', { href: buildPath(b.id), class: 'build-link', 'data-build': b.id, 'data-view': 'attributes' }, h('code', {}, b.id));
      const attrLink = h('a', { href: buildPath(b.id), 'data-build': b.id, 'data-view': 'attributes', 'aria-label': `Attributes of build ${b.id}` }, 'attributes');
      const eventsLink = h('a', { href: eventsPath(b.id), 'data-build': b.id, 'data-view': 'events', 'aria-label': `Events of build ${b.id}` }, 'events');
      return h(
        'tr',
        { 'data-build-id': b.id },
        h('td', {}, idLink),
        h('td', {}, b.buildToolType),
        h('td', {}, projectOf(b)),
        h('td', {}, h('span', { class: `outcome ${outcome}` }, outcome)),
        h('td', {}, formatTime(a[NAMED_FIELDS.buildStartTime.name])),
        h('td', { class: 'num' }, formatDuration(a[NAMED_FIELDS.buildDuration.name])),
        h('td', {}, attrLink, ' · ', eventsLink, ' · ', h('a', { href: `/builds/${encodeURIComponent(b.id)}`, 'aria-label': `Page of build ${b.id}` }, 'page')),
      );
    }),
  );
  table.hidden = builds.length === 0;

}

/** The chart of every match per day (from the server's aggregate, not from the listed page). */
export function renderDays(days: readonly DayCount[]): void {
  const chart = byId('chart');
  chart.hidden = days.length === 0;
  byId('chart-svg').replaceChildren(renderChart(days));
}

export function clearResults(): void {
  byId<HTMLTableElement>('results-table').hidden = true;
  byId<HTMLTableElement>('results-table').tBodies[0]!.replaceChildren();
  byId('chart').hidden = true;
}

function attributeTable(b: BuildRow): HTMLElement {
  const rows: [string, string][] = [
    ['id', b.id],
    ['availableAt', `${formatTime(b.availableAt)} (${b.availableAt})`],
    ['buildToolType', b.buildToolType],
    ['buildToolVersion', b.buildToolVersion],
    ['buildAgentVersion', b.buildAgentVersion],
  ];
  for (const [k, v] of Object.entries(b.attributes ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
    const shown = k === 'buildStartTime' ? `${formatTime(v)} (${text(v)})` : k === 'buildDuration' ? `${formatDuration(v)} (${text(v)} ms)` : text(v);
    rows.push([k, shown]);
  }
  return h(
    'table',
    { class: 'attributes' },
    h('caption', { class: 'visually-hidden' }, `Attributes of build ${b.id}`),
    h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, h('code', {}, k)), h('td', {}, v)))),
  );
}

async function showBuild(id: string, view: 'attributes' | 'events'): Promise<void> {
  const dialog = byId<HTMLDialogElement>('build-dialog');
  const body = byId('build-dialog-body');
  byId('build-dialog-title').textContent = `Build ${id}: ${view}`;
  body.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  if (!dialog.open) dialog.showModal();
  try {
    if (view === 'attributes') {
      body.replaceChildren(attributeTable(await getBuild(id)), h('p', { class: 'small' }, h('a', { href: eventsPath(id), 'data-build': id, 'data-view': 'events' }, 'Show events')));
    } else {
      const { events, truncated } = await getEvents(id, EVENT_LIMIT);
      const items = events.map((e) => {
        try {
          const parsed = JSON.parse(e.data) as { timestamp?: number; type?: { eventType?: string }; data?: unknown };
          const type = parsed.type?.eventType ?? e.event;
          return h('li', {}, h('span', { class: 'event-time' }, formatTime(parsed.timestamp)), ' ', h('strong', {}, type), ' ', h('code', { class: 'event-data' }, JSON.stringify(parsed.data ?? {})));
        } catch {
          // Not JSON: show the frame as it came.
          return h('li', {}, h('strong', {}, e.event), ' ', h('code', { class: 'event-data' }, e.data));
        }
      });
      body.replaceChildren(
        h('p', { class: 'muted small' }, `${events.length} event${events.length === 1 ? '' : 's'}${truncated ? ` (first ${EVENT_LIMIT} shown)` : ''}`),
        h('ol', { class: 'events' }, ...items),
        h('p', { class: 'small' }, h('a', { href: buildPath(id), 'data-build': id, 'data-view': 'attributes' }, 'Show attributes')),
      );
    }
  } catch (err) {
    body.replaceChildren(h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
  }
}

/** Links to a build's attributes and events open the detail dialog (the API needs the Bearer key). */
export function setupBuildLinks(): void {
  const dialog = byId<HTMLDialogElement>('build-dialog');
  byId('build-dialog-close').addEventListener('click', () => dialog.close());
  document.addEventListener('click', (ev) => {
    const a = (ev.target as Element | null)?.closest?.('a[data-build]');
    if (!(a instanceof HTMLAnchorElement)) return;
    // Let the browser handle new-tab clicks (they show the raw API answer when the API allows it).
    if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    void showBuild(a.dataset['build']!, a.dataset['view'] === 'events' ? 'events' : 'attributes');
  });
}
