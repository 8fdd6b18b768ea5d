// Railroad diagrams of the grammar, generated from the parser itself, so they cannot drift from
// what the parser accepts (a test compares them with the committed grammar/diagrams.html).

import { createSyntaxDiagramsCode } from 'chevrotain';
import { serializedGrammar } from './parser.js';

/** The HTML page of the diagrams; its scripts and styles are next to it in `diagrams-resources/`. */
export function syntaxDiagramsHtml(): string {
  return createSyntaxDiagramsCode(serializedGrammar(), {
    resourceBase: './diagrams-resources/',
    css: './diagrams-resources/diagrams.css',
  });
}

/** The grammar as chevrotain serialises it (rules, alternatives, token names), as stable JSON. */
export function grammarJson(): string {
  return `${JSON.stringify(serializedGrammar(), null, 2)}\n`;
}
