// The query editor on top of the builds list and the trends: the editor the playground uses too
// (ui/editor.ts: CodeMirror 6 with the project's highlighting, lint and completion). A valid
// query is applied by itself a moment after the last keystroke (replacing the address, so typing
// does not fill the history); Search and Ctrl+Enter apply it at once as a new history entry. While
// the text is invalid the results below are marked stale.

import type { EditorView } from '@codemirror/view';
import { formatQuery } from '../../src/query/index.js';
import { analyze } from '../../ui/analysis.js';
import { h } from '../../ui/dom.js';
import { createEditor } from '../../ui/editor.js';

export interface QueryBar {
  readonly element: HTMLElement;
  readonly view: EditorView;
}

export function queryBar(initial: string, onApply: (query: string, push: boolean) => void, onValidity: (valid: boolean) => void): QueryBar {
  const editorHost = h('div', { class: 'editor', 'data-testid': 'editor' });
  const status = h('span', { class: 'query-status', role: 'status', 'aria-live': 'polite', id: 'query-status' });
  const problems = h('ul', { class: 'diagnostics', id: 'diagnostics', 'aria-label': 'Problems in the query' });
  const run = h('button', { type: 'button', id: 'search-button', title: 'Search (Ctrl+Enter)' }, 'Search');
  let timer: ReturnType<typeof setTimeout> | undefined;
  let applied = initial;

  const apply = (push: boolean) => {
    clearTimeout(timer);
    const text = view.state.doc.toString();
    if (!analyze(text).ok) return;
    if (text === applied && !push) return;
    applied = text;
    onApply(text, push);
  };
  const check = (text: string) => {
    const r = analyze(text);
    status.textContent = r.ok ? '' : `${r.diagnostics.length} problem${r.diagnostics.length === 1 ? '' : 's'} in the query`;
    status.className = `query-status ${r.ok ? 'ok' : 'bad'}`;
    problems.replaceChildren(...r.diagnostics.map((d) => h('li', { class: 'diagnostic' }, `${d.line}:${d.column} ${d.message}`)));
    onValidity(r.ok);
    return r.ok;
  };
  const view = createEditor({
    parent: editorHost,
    doc: initial,
    onChange: (text) => {
      clearTimeout(timer);
      if (check(text)) timer = setTimeout(() => apply(false), 600);
    },
    onRun: () => apply(true),
    onFormat: () => {
      const r = analyze(view.state.doc.toString());
      if (r.ok && r.expr) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: formatQuery(r.expr) } });
    },
  });
  run.addEventListener('click', () => apply(true));
  check(initial);
  const element = h(
    'section',
    { class: 'panel query-bar', 'aria-labelledby': 'query-heading', id: 'query-section' },
    h('h2', { id: 'query-heading', class: 'visually-hidden' }, 'Query'),
    editorHost,
    h('div', { class: 'toolbar' }, run, status),
    problems,
  );
  return { element, view };
}
