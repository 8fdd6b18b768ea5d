// Syntax highlighting as a CodeMirror view plugin: mark decorations from the project's lexer.
// The query is short, so it is re-lexed whole on every change.

import { RangeSetBuilder } from '@codemirror/state';
import { Decoration, ViewPlugin, type DecorationSet, type EditorView, type ViewUpdate } from '@codemirror/view';
import { classify, type TokenClass } from './tokens.js';

const MARKS: Readonly<Record<TokenClass, Decoration>> = Object.fromEntries(
  (['field', 'operator', 'keyword', 'value', 'string', 'paren', 'negation', 'wildcard', 'error'] as const).map((c) => [c, Decoration.mark({ class: `tok-${c}` })]),
) as Record<TokenClass, Decoration>;

function decorate(view: EditorView): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  let pos = 0;
  for (const t of classify(view.state.doc.toString())) {
    // Ranges must not overlap and must come in order; a lexer error inside a token is skipped.
    if (t.from < pos) continue;
    builder.add(t.from, t.to, MARKS[t.cls]);
    pos = t.to;
  }
  return builder.finish();
}

export const queryHighlighter = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = decorate(view);
    }
    update(u: ViewUpdate): void {
      if (u.docChanged) this.decorations = decorate(u.view);
    }
  },
  { decorations: (v) => v.decorations },
);
