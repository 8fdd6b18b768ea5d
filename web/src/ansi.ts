// A console line with its ANSI colours, as DOM nodes. Parsing is anser's (a small, maintained
// parser of SGR codes: 16, 256 and true colours, bold, dim, italic, underline); the nodes are
// built here, without innerHTML, so a log line can never inject markup. Colours are set through
// the style object (CSSOM), which the page's Content-Security-Policy allows.
//
// Each line is parsed alone: a colour that a line leaves open does not carry to the next one.
// Tools reset their colours at the end of a line, and a paged log cannot know what an earlier
// page left open.

import Anser from 'anser';

const DECORATIONS: Readonly<Record<string, string>> = {
  bold: 'ansi-bold',
  dim: 'ansi-dim',
  italic: 'ansi-italic',
  underline: 'ansi-underline',
  strikethrough: 'ansi-strike',
};

/** The line's text and colours, as nodes to append to a line element. */
export function ansiNodes(line: string): Node[] {
  if (!line.includes('\u001b')) return [document.createTextNode(line)];
  const out: Node[] = [];
  for (const part of Anser.ansiToJson(line, { remove_empty: true })) {
    if (part.content === '') continue;
    const hidden = part.decorations.includes('hidden');
    const styled = part.fg !== null || part.bg !== null || part.decorations.length > 0;
    if (!styled || hidden) {
      if (!hidden) out.push(document.createTextNode(part.content));
      continue;
    }
    const span = document.createElement('span');
    span.textContent = part.content;
    const [fg, bg] = part.decorations.includes('reverse') ? [part.bg, part.fg] : [part.fg, part.bg];
    if (fg) span.style.color = `rgb(${fg})`;
    if (bg) span.style.backgroundColor = `rgb(${bg})`;
    for (const d of part.decorations) if (DECORATIONS[d]) span.classList.add(DECORATIONS[d]);
    out.push(span);
  }
  return out;
}
