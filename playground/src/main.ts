// The query playground page: wires the editor, the live views and the server calls together.

import type { EditorView } from '@codemirror/view';
import { formatQuery } from '../../src/query/index.js';
import { analyze } from '../../ui/analysis.js';
import { ApiError, countMatches, explain, getJson, matchesPerDay, searchBuilds } from './api.js';
import { renderAst } from './ast-view.js';
import { accessKey, forgetAccessKey, storeAccessKey } from './auth.js';
import { byId, h } from '../../ui/dom.js';
import { createEditor, insertTerm, setQuery } from '../../ui/editor.js';
import { dataValueCompletion, fetchFieldValues } from './value-completion.js';
import { EXAMPLES } from './examples.js';
import { setupReference } from './reference.js';
import { daysFromTrends } from './chart-data.js';
import { clearResults, renderDays, renderResults, setupBuildLinks } from './results.js';
import { hashForQuery, queryFromHash, shareUrl } from './share.js';
import { setupSqlTabs, showSql } from './sql-view.js';

/** How many builds the table lists (newest first); the count and the chart cover every match. */
const MAX_BUILDS = 1000;
/** Days the chart covers, ending today (UTC). */
const CHART_DAYS = 62;
const DEFAULT_QUERY = 'buildOutcome:failed buildStartTime>-7d';

let view: EditorView;
const timers = new Map<string, ReturnType<typeof setTimeout>>();
const inFlight = new Map<string, AbortController>();

function debounce(name: string, ms: number, fn: () => void): void {
  clearTimeout(timers.get(name));
  timers.set(name, setTimeout(fn, ms));
}

/** A fresh abort signal for a kind of request, cancelling the previous one still running. */
function freshSignal(name: string): AbortSignal {
  inFlight.get(name)?.abort();
  const c = new AbortController();
  inFlight.set(name, c);
  return c.signal;
}

const isAbort = (err: unknown) => err instanceof DOMException && err.name === 'AbortError';

function query(): string {
  return view.state.doc.toString();
}

function selectSpan(span: { start: number; end: number }): void {
  view.dispatch({ selection: { anchor: span.start, head: span.end }, scrollIntoView: true });
  view.focus();
}

function renderDiagnostics(text: string): boolean {
  const result = analyze(text);
  const list = byId('diagnostics');
  const status = byId('query-status');
  list.replaceChildren(
    ...result.diagnostics.map((d) => {
      const jump = h('button', { type: 'button', class: 'link-button', title: 'Show in the editor' }, `${d.line}:${d.column}`);
      jump.addEventListener('click', () => selectSpan(d));
      return h('li', { class: 'diagnostic', 'data-code': d.code }, jump, ' ', d.message);
    }),
  );
  const n = result.diagnostics.length;
  status.textContent = result.ok ? 'Valid query' : `${n} problem${n === 1 ? '' : 's'}`;
  status.className = `query-status ${result.ok ? 'ok' : 'bad'}`;
  renderAst(byId('ast-tree'), result.expr, selectSpan);
  byId<HTMLButtonElement>('format-button').disabled = !result.ok;
  return result.ok;
}

async function refreshSql(text: string): Promise<void> {
  const signal = freshSignal('explain');
  try {
    const res = await explain(text, signal);
    showSql(res, res.sql ? '' : 'The query has problems; fix them to see its SQL.');
  } catch (err) {
    if (!isAbort(err)) showSql(null, `Could not compile the query: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function runSearch(): Promise<void> {
  const text = query();
  const status = byId('results-status');
  if (!analyze(text).ok) {
    status.textContent = 'Fix the problems in the query to see matching builds.';
    return;
  }
  if (accessKey() === null) {
    // Nothing to ask the server without a key (a request would only be refused).
    clearResults();
    status.textContent = 'Sign in with an access key to see matching builds.';
    return;
  }
  const signal = freshSignal('search');
  status.textContent = 'Searching…';
  try {
    // The table lists the newest builds; the count and the chart cover every match.
    const [builds, count, days] = await Promise.all([searchBuilds(text, MAX_BUILDS, signal), countMatches(text, signal), matchesPerDay(text, CHART_DAYS, signal)]);
    renderResults(builds);
    renderDays(daysFromTrends(days));
    status.textContent =
      count === 0
        ? 'No builds match.'
        : `${count.toLocaleString('en-US')} build${count === 1 ? '' : 's'} match${count === 1 ? 'es' : ''}${count > builds.length ? ` (the newest ${builds.length} are listed)` : ''}.`;
  } catch (err) {
    if (isAbort(err)) return;
    clearResults();
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      status.textContent = accessKey()
        ? `The server refused the access key: ${err.message}`
        : 'Sign in with an access key to see matching builds.';
    } else {
      status.textContent = `Search failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}

function onQueryChange(text: string): void {
  debounce('analyze', 80, () => {
    const ok = renderDiagnostics(text);
    // Keep the address shareable at all times, without filling the history with keystrokes.
    history.replaceState(null, '', hashForQuery(text));
    byId('share-box').hidden = true;
    debounce('explain', 200, () => void refreshSql(text));
    if (ok) debounce('search', 350, () => void runSearch());
    else {
      // Results of an earlier query must not pass for this one's.
      clearTimeout(timers.get('search'));
      inFlight.get('search')?.abort();
      clearResults();
      byId('results-status').textContent = 'Fix the problems in the query to see matching builds.';
    }
  });
}

function format(): void {
  const result = analyze(query());
  if (result.ok && result.expr) setQuery(view, formatQuery(result.expr));
}

function setupShare(): void {
  const box = byId('share-box');
  const input = byId<HTMLInputElement>('share-link');
  byId('share-button').addEventListener('click', () => {
    input.value = shareUrl(query());
    box.hidden = false;
    input.focus();
    input.select();
  });
  byId('copy-share-button').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(input.value);
      byId('query-status').textContent = 'Link copied';
    } catch {
      input.select();
      byId('query-status').textContent = 'Press Ctrl+C to copy the selected link';
    }
  });
  window.addEventListener('hashchange', () => {
    const q = queryFromHash(location.hash);
    if (q !== null && q !== query()) setQuery(view, q);
  });
}

function setupExamples(): void {
  byId('examples').replaceChildren(
    ...EXAMPLES.map((ex) => {
      const b = h('button', { type: 'button', class: 'example' }, h('code', {}, ex.query), h('span', { class: 'muted small' }, ex.description));
      b.addEventListener('click', () => {
        setQuery(view, ex.query);
        view.focus();
      });
      return h('li', {}, b);
    }),
  );
}

function showSignedIn(on: boolean): void {
  byId('sign-in-form').hidden = on;
  byId('signed-in').hidden = !on;
}

function setupSignIn(): void {
  const form = byId<HTMLFormElement>('sign-in-form');
  const input = byId<HTMLInputElement>('access-key');
  const message = byId('auth-message');
  showSignedIn(accessKey() !== null);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    message.textContent = 'Checking the access key…';
    try {
      // An empty listing tells whether the server accepts the key for build data (maxBuilds=0
      // answers at once: a listing without a start would wait for a new build).
      await getJson<unknown>('/api/builds?maxBuilds=0', undefined, key);
      storeAccessKey(key);
      input.value = '';
      message.textContent = 'Signed in.';
      showSignedIn(true);
      void runSearch();
    } catch (err) {
      message.textContent = `Sign-in failed: ${err instanceof Error ? err.message : String(err)}`;
      input.focus();
    }
  });
  byId('sign-out-button').addEventListener('click', () => {
    forgetAccessKey();
    message.textContent = 'Signed out.';
    showSignedIn(false);
    clearResults();
    byId('results-status').textContent = 'Sign in with an access key to see matching builds.';
    input.focus();
  });
}

function start(): void {
  const initial = queryFromHash(location.hash) ?? DEFAULT_QUERY;
  view = createEditor({
    parent: byId('editor'),
    doc: initial,
    onChange: onQueryChange,
    onRun: () => void runSearch(),
    onFormat: format,
    completionSources: [dataValueCompletion(fetchFieldValues(accessKey))],
  });
  byId('run-button').addEventListener('click', () => void runSearch());
  byId('format-button').addEventListener('click', format);
  setupShare();
  setupExamples();
  setupSqlTabs();
  setupSignIn();
  setupBuildLinks();
  setupReference({
    list: byId('field-list'),
    search: byId<HTMLInputElement>('field-search'),
    count: byId('field-count'),
    onInsert: (example) => insertTerm(view, example),
  });
  onQueryChange(initial);
  // Tests and curious people can reach the editor from the console.
  (window as unknown as { playground: unknown }).playground = { view };
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
