// Code frames: a diagnostic shown under the line of the query it points at, with a caret under
// each faulty character.

import type { Diagnostic } from './diagnostic.js';

export function formatDiagnostic(text: string, d: Diagnostic): string {
  const lines = text.split(/\r\n|\r|\n/);
  const lineText = lines[d.line - 1] ?? '';
  const gutter = String(d.line);
  const pad = ' '.repeat(gutter.length);
  const startCol = d.column - 1;
  // A fault spanning lines is underlined to the end of its first line; one at the end, by one caret.
  const width = Math.max(1, Math.min(d.end - d.start, lineText.length - startCol));
  const out = [
    `error[${d.code}]: ${d.message}`,
    `${pad}--> ${d.line}:${d.column}`,
    `${pad} |`,
    `${gutter} | ${lineText}`,
    `${pad} | ${' '.repeat(startCol)}${'^'.repeat(width)}`,
  ];
  if (d.expected.length > 0) out.push(`${pad} = expected: ${d.expected.join(', ')}`);
  if (d.suggestion !== undefined) out.push(`${pad} = did you mean: ${d.suggestion}`);
  return out.join('\n');
}
