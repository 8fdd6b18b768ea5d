// The ways into a comparison: from a build's page (the previous build of its project on its
// branch, found with a search, or any build picked from a list) and from the builds list (tick
// two rows, then Compare).

import { h } from '../../ui/dom.js';
import { api, type BuildDetails, type ListRow } from './api.js';
import { compareUrl } from './compare-page.js';
import { customValueTerm, formatStart, term } from './logic.js';
import type { PageContext } from './page.js';

const BRANCH_VALUE = 'Git branch';

/**
 * The search for the builds before `b` of its project on its branch (the custom value the
 * agents send), or of its project when it names no branch; null without a project or start.
 */
export function previousBuildsQuery(b: Pick<BuildDetails, 'project' | 'start' | 'values'>): string | null {
  if (b.project === null || b.start === null) return null;
  const branch = b.values.find((v) => v.name === BRANCH_VALUE)?.value;
  const terms = [term('project', b.project), ...(branch === undefined ? [] : [customValueTerm(BRANCH_VALUE, branch)]), `buildStartTime<${new Date(b.start).toISOString()}`];
  return terms.join(' ');
}

/** Of the builds found, the one that started last (the list is in the order builds arrived). */
export function latestStarted(rows: readonly ListRow[], except: string): ListRow | undefined {
  let best: ListRow | undefined;
  for (const r of rows) if (r.id !== except && r.start !== null && (best === undefined || r.start > best.start!)) best = r;
  return best;
}

/** The build page's compare links. */
export function compareLinks(ctx: PageContext, b: BuildDetails): HTMLElement {
  const previous = h('span', { id: 'compare-previous' }, h('span', { class: 'muted' }, 'Looking for the previous build…'));
  const picker = h('details', { class: 'compare-picker', id: 'compare-picker' }, h('summary', {}, 'Compare with another build…'));
  const box = h('p', { class: 'compare-links' }, previous, ' ', picker);
  const query = previousBuildsQuery(b);
  const branch = b.values.find((v) => v.name === BRANCH_VALUE)?.value;
  if (query === null) previous.replaceChildren(h('span', { class: 'muted' }, 'No project or start time to find a previous build by.'));
  else {
    void api.list(query, null, 50, ctx.signal).then(
      (page) => {
        const found = latestStarted(page.builds, b.id);
        previous.replaceChildren(
          found === undefined
            ? h('span', { class: 'muted' }, `No earlier build of ${b.project}${branch === undefined ? '' : ` on ${branch}`}.`)
            : h('a', { href: compareUrl(found.id, b.id), id: 'compare-previous-link' }, `Compare with the previous build of ${b.project}${branch === undefined ? '' : ` on ${branch}`}`),
        );
      },
      () => previous.replaceChildren(h('span', { class: 'muted' }, 'Could not look for the previous build.')),
    );
  }
  // The list of candidates is loaded when the picker is first opened.
  picker.addEventListener('toggle', () => {
    if (!picker.open || picker.querySelector('ul,form')) return;
    const form = h('form', { class: 'compare-id-form' }, h('label', { for: 'compare-with-id' }, 'Build ID '), h('input', { id: 'compare-with-id', required: true, spellcheck: 'false' }), h('button', { type: 'submit' }, 'Compare'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const other = (form.querySelector('input') as HTMLInputElement).value.trim();
      if (other !== '') ctx.navigate(compareUrl(other, b.id));
    });
    const list = h('ul', { class: 'compare-candidates' }, h('li', { class: 'muted' }, 'Loading recent builds…'));
    picker.append(form, list);
    void api.list(b.project === null ? '' : term('project', b.project), null, 20, ctx.signal).then(
      (page) =>
        list.replaceChildren(
          ...page.builds
            .filter((r) => r.id !== b.id)
            .map((r) => h('li', {}, h('a', { href: compareUrl(r.id, b.id) }, h('span', { class: `outcome ${r.outcome ?? 'unknown'}` }, r.outcome ?? 'unknown'), ' ', h('code', {}, r.id), ` ${formatStart(r.start)} ${r.requested.join(' ')}`))),
        ),
      () => list.replaceChildren(h('li', { class: 'error' }, 'Could not list the builds.')),
    );
  });
  return box;
}

/**
 * The builds list's compare action: a checkbox on each row; with two ticked, Compare opens them
 * (the older as A). Added to a table already drawn, so the list page needs one call.
 */
export function compareSelection(ctx: PageContext, table: HTMLTableElement, rows: readonly ListRow[], place: HTMLElement): void {
  const button = h('button', { type: 'button', id: 'compare-selected', disabled: true, title: 'Tick two builds to compare them' }, 'Compare 2 selected');
  place.append(button);
  const picked: string[] = [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  table.tHead?.rows[0]?.prepend(h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Select')));
  for (const tr of table.tBodies[0]?.rows ?? []) {
    const id = tr.dataset['buildId'];
    if (id === undefined) continue;
    const box = h('input', { type: 'checkbox', class: 'compare-pick', 'aria-label': `Select ${id} to compare` });
    box.addEventListener('change', () => {
      const at = picked.indexOf(id);
      if (box.checked && at < 0) picked.push(id);
      if (!box.checked && at >= 0) picked.splice(at, 1);
      // Two at most: ticking a third unticks the first.
      while (picked.length > 2) {
        const first = picked.shift()!;
        const other = table.querySelector<HTMLInputElement>(`tr[data-build-id="${CSS.escape(first)}"] input.compare-pick`);
        if (other) other.checked = false;
      }
      button.disabled = picked.length !== 2;
    });
    tr.prepend(h('td', {}, box));
  }
  button.addEventListener('click', () => {
    if (picked.length !== 2) return;
    const x = byId.get(picked[0]!)!;
    const y = byId.get(picked[1]!)!;
    const [older, newer] = (x.start ?? 0) <= (y.start ?? 0) ? [x, y] : [y, x];
    ctx.navigate(compareUrl(older.id, newer.id));
  });
}
