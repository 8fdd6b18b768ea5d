// The query editor: CodeMirror 6 with the project's own lexer for highlighting, the parser's
// diagnostics as lint (underline, message on hover), and the project's completion.

import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
  startCompletion,
  type Completion as CmCompletion,
  type CompletionContext,
  type CompletionResult,
  type CompletionSource,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching } from '@codemirror/language';
import { linter, lintKeymap, type Diagnostic as CmDiagnostic } from '@codemirror/lint';
import { EditorState, Prec } from '@codemirror/state';
import { EditorView, drawSelection, keymap, placeholder } from '@codemirror/view';
import { completeQuery } from '../src/query/index.js';
import { analyze } from './analysis.js';
import { queryHighlighter } from './highlight.js';

export interface EditorOptions {
  readonly parent: HTMLElement;
  readonly doc: string;
  readonly onChange: (text: string) => void;
  readonly onRun: () => void;
  readonly onFormat: () => void;
  /** More completion sources next to the language's own, e.g. values from the data (playground/src/value-completion.ts). */
  readonly completionSources?: readonly CompletionSource[];
}

const COMPLETION_TYPES: Readonly<Record<string, string>> = {
  field: 'property',
  value: 'enum',
  operator: 'operator',
  keyword: 'keyword',
};

function lintSource(view: EditorView): CmDiagnostic[] {
  const text = view.state.doc.toString();
  const { diagnostics } = analyze(text);
  return diagnostics.map((d) => {
    const from = Math.min(d.start, text.length);
    const to = Math.min(Math.max(d.end, from), text.length);
    const suggestion = d.suggestion;
    const cm: CmDiagnostic = {
      from,
      to,
      severity: 'error',
      source: d.code,
      message: d.message,
    };
    if (suggestion) {
      return {
        ...cm,
        actions: [
          {
            name: `Use ${suggestion}`,
            apply: (v: EditorView, f: number, t: number) => v.dispatch({ changes: { from: f, to: t, insert: suggestion } }),
          },
        ],
      };
    }
    return cm;
  });
}

function completionSource(ctx: CompletionContext): CompletionResult | null {
  const text = ctx.state.doc.toString();
  const items = completeQuery(text, ctx.pos);
  if (items.length === 0) return null;
  // Only offer completions unprompted when the cursor is at a word the person is typing;
  // Ctrl+Space (explicit) always offers them.
  const from = Math.min(...items.map((c) => c.from));
  if (!ctx.explicit && from === ctx.pos && !/[:(<>=]$/.test(text.slice(0, ctx.pos))) return null;
  const options: CmCompletion[] = items.map((c, i) => ({
    label: c.label,
    type: COMPLETION_TYPES[c.kind] ?? 'text',
    detail: c.detail,
    info: c.documentation || undefined,
    boost: -i / items.length,
    apply: (view: EditorView) => {
      // A field comes with its ':' (c.insert); then its values are offered at once.
      const insert = c.insert ?? c.label;
      view.dispatch({
        changes: { from: c.from, to: c.to, insert },
        selection: { anchor: c.from + insert.length },
        userEvent: 'input.complete',
      });
      if (c.insert !== undefined && insert.endsWith(':')) startCompletion(view);
    },
  }));
  return { from, to: ctx.pos, options, filter: false };
}

const theme = EditorView.theme({
  '&': { fontSize: '15px', border: '1px solid var(--border)', borderRadius: '6px', background: 'var(--editor-bg)' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '1px' },
  '.cm-content': { fontFamily: 'var(--mono)', padding: '8px 4px', minHeight: '3.2em', caretColor: 'var(--fg)' },
  '.cm-scroller': { fontFamily: 'var(--mono)' },
  '.cm-tooltip.cm-tooltip-lint': { maxWidth: '36em' },
});

export function createEditor(opts: EditorOptions): EditorView {
  return new EditorView({
    parent: opts.parent,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        history(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        EditorView.lineWrapping,
        placeholder('Type a query, e.g. buildOutcome:failed buildStartTime>-7d'),
        EditorView.contentAttributes.of({ 'aria-label': 'Query', 'aria-describedby': 'diagnostics', 'aria-multiline': 'true' }),
        queryHighlighter,
        linter(lintSource, { delay: 150 }),
        autocompletion({ override: [completionSource, ...(opts.completionSources ?? [])], activateOnTyping: true, icons: true }),
        Prec.highest(
          keymap.of([
            { key: 'Mod-Enter', run: () => (opts.onRun(), true) },
            { key: 'Shift-Alt-f', run: () => (opts.onFormat(), true) },
          ]),
        ),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) opts.onChange(u.state.doc.toString());
        }),
        theme,
      ],
    }),
  });
}

/** Replaces the whole query (examples, shared links, format) as one undoable change. */
export function setQuery(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: text.length } });
}

/** Inserts a term at the cursor, with a separating space where one is needed. */
export function insertTerm(view: EditorView, term: string): void {
  const { from, to } = view.state.selection.main;
  const doc = view.state.doc.toString();
  const before = from > 0 && !/[\s(]/.test(doc[from - 1]!) ? ' ' : '';
  const after = to < doc.length && !/[\s)]/.test(doc[to]!) ? ' ' : '';
  const insert = `${before}${term}${after}`;
  view.dispatch({ changes: { from, to, insert }, selection: { anchor: from + before.length + term.length } });
  view.focus();
}
