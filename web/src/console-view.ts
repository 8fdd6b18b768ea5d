// The build page's Console log section: the log a page of lines at a time from
// GET /api/builds/{id}/console (never the whole log into the page), ANSI colours rendered, each
// line an anchor (`#console-L12` opens the page with line 12 marked), the first error line
// linked, and a search over the whole log that jumps from match to match.

import { h } from '../../ui/dom.js';
import { ansiNodes } from './ansi.js';
import type { BuildDetails } from './api.js';
import { plural } from './logic.js';
import { reportApi, type ConsolePage } from './report-api.js';

export const LINES_PER_PAGE = 500;

/** The anchor of 0-based line `n` (shown 1-based, as editors number lines). */
export const lineAnchor = (n: number): string => `#console-L${n + 1}`;

/** The 0-based line an address's hash names, or null. */
export function lineOfHash(hash: string): number | null {
  const m = /^#console-L(\d+)$/.exec(hash);
  return m ? Math.max(0, Number(m[1]) - 1) : null;
}

export interface ConsoleView {
  /** Shows the page holding 0-based line `n`, marks it and scrolls to it. */
  showLine(n: number): Promise<void>;
}

export function consoleView(box: HTMLElement, b: BuildDetails, signal: AbortSignal): ConsoleView {
  const s = b.console;
  if (s.lines === 0) {
    box.append(h('p', { class: 'muted' }, 'This build sent no console output.'));
    return { showLine: async () => {} };
  }
  box.append(
    h(
      'p',
      { class: 'console-summary' },
      plural(s.lines, 'line'),
      s.firstError ? h('span', {}, ' · first error at ', h('a', { href: lineAnchor(s.firstError.line), class: 'console-first-error' }, `line ${(s.firstError.line + 1).toLocaleString('en-US')}`)) : '',
    ),
  );
  if (s.truncated) {
    box.append(h('p', { class: 'console-truncated', id: 'console-truncated' }, 'The log was cut: the build sent more console output than the server keeps for a build (limits.consoleBytesPerBuild); the lines after the last one shown were not stored.'));
  }
  const search = h('input', { type: 'search', id: 'console-search', placeholder: 'Search the log', 'aria-label': 'Search the console log', autocomplete: 'off' });
  const prevMatch = h('button', { type: 'button', id: 'console-prev-match', disabled: true }, '↑');
  const nextMatch = h('button', { type: 'button', id: 'console-next-match' }, '↓ Next match');
  const matchStatus = h('span', { class: 'muted', role: 'status', id: 'console-matches' });
  const form = h('form', { class: 'controls', role: 'search' }, search, ' ', prevMatch, nextMatch, ' ', matchStatus);
  const status = h('p', { class: 'muted', id: 'console-status' });
  const log = h('div', { class: 'console-log', id: 'console-log', role: 'log', 'aria-label': 'Console log' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of the console log' });
  box.append(form, status, log, pager);

  let offset = -1;
  let marked: number | null = null;
  let matches: { lines: readonly number[]; count: number } | null = null;
  let at = -1;

  const draw = (page: ConsolePage) => {
    const needle = search.value.trim().toLowerCase();
    log.replaceChildren(
      ...page.lines.map((text, i) => {
        const n = page.offset + i;
        const line = h('div', { class: `console-line${n === marked ? ' marked' : ''}${n === s.firstError?.line ? ' first-error' : ''}`, id: lineAnchor(n).slice(1) }, h('a', { class: 'line-no', href: lineAnchor(n), 'aria-label': `line ${n + 1}` }, String(n + 1)));
        const body = h('span', { class: 'line-text' }, ...ansiNodes(text));
        if (needle !== '' && body.textContent!.toLowerCase().includes(needle)) line.classList.add('match');
        line.append(body);
        return line;
      }),
    );
    status.textContent = `Lines ${(page.offset + 1).toLocaleString('en-US')}–${(page.offset + page.lines.length).toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}`;
    const prev = h('button', { type: 'button', disabled: page.offset === 0 }, '« Previous lines');
    const next = h('button', { type: 'button', disabled: page.offset + LINES_PER_PAGE >= page.total, id: 'console-next-page' }, 'Next lines »');
    prev.addEventListener('click', () => void load(Math.max(0, page.offset - LINES_PER_PAGE)));
    next.addEventListener('click', () => void load(page.offset + LINES_PER_PAGE));
    pager.replaceChildren(prev, next);
  };

  let loads = 0;
  const load = async (from: number, force = false): Promise<void> => {
    if (from === offset && !force) return;
    // Only the last page asked for is drawn, whichever answer comes first.
    const mine = ++loads;
    let page: ConsolePage;
    try {
      page = await reportApi.console(b.id, { offset: from, limit: LINES_PER_PAGE }, signal);
    } catch (err) {
      if (!signal.aborted) status.textContent = `Could not load the console log: ${(err as Error).message}`;
      return;
    }
    if (mine !== loads) return;
    offset = from;
    draw(page);
  };

  const showLine = async (n: number): Promise<void> => {
    marked = n;
    await load(Math.floor(n / LINES_PER_PAGE) * LINES_PER_PAGE, true);
    const el = document.getElementById(lineAnchor(n).slice(1));
    el?.scrollIntoView({ block: 'center' });
  };

  const step = (by: number) => {
    if (matches === null || matches.lines.length === 0) return;
    at = (at + by + matches.lines.length) % matches.lines.length;
    matchStatus.textContent = `match ${at + 1} of ${matches.count.toLocaleString('en-US')}${matches.count > matches.lines.length ? ` (the first ${matches.lines.length.toLocaleString('en-US')} can be stepped through)` : ''}`;
    void showLine(matches.lines[at]!);
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = search.value.trim();
    if (text === '') {
      matches = null;
      matchStatus.textContent = '';
      prevMatch.disabled = true;
      return;
    }
    void (async () => {
      let page: ConsolePage;
      try {
        page = await reportApi.console(b.id, { offset: 0, limit: 1, search: text }, signal);
      } catch (err) {
        if (!signal.aborted) matchStatus.textContent = `Could not search the log: ${(err as Error).message}`;
        return;
      }
      matches = page.matches ?? { lines: [], count: 0 };
      at = -1;
      prevMatch.disabled = matches.lines.length === 0;
      if (matches.lines.length === 0) matchStatus.textContent = 'no line holds it';
      else step(1);
    })();
  });
  prevMatch.addEventListener('click', () => step(-1));
  nextMatch.addEventListener('click', () => (matches === null ? form.requestSubmit() : step(1)));
  // An address naming a line (a shared link) opens at that line.
  const named = lineOfHash(location.hash);
  if (named !== null) void showLine(named);
  else void load(0);
  return { showLine };
}
