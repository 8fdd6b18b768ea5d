// Regenerates grammar/diagrams.html and grammar/grammar.json from the parser:
//   node --import tsx grammar/generate.ts
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { grammarJson, syntaxDiagramsHtml } from '../src/query/diagrams.js';

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
writeFileSync(here('diagrams.html'), syntaxDiagramsHtml());
writeFileSync(here('grammar.json'), grammarJson());
console.log('wrote grammar/diagrams.html and grammar/grammar.json');
