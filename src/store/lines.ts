// Splits NDJSON input (a string or a byte/string stream) into numbered lines. Line numbers count
// every line of the input, blank ones included, so that errors point at the line in the file.

export interface NumberedLine {
  readonly line: number;
  readonly text: string;
}

export async function* numberedLines(input: string | AsyncIterable<string | Uint8Array>): AsyncGenerator<NumberedLine> {
  let n = 0;
  if (typeof input === 'string') {
    for (const raw of input.split('\n')) {
      n++;
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (text.trim().length > 0) yield { line: n, text };
    }
    return;
  }
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  for await (const chunk of input) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl: number;
    while ((nl = rest.indexOf('\n', start)) !== -1) {
      n++;
      let text = rest.slice(start, nl);
      if (text.endsWith('\r')) text = text.slice(0, -1);
      start = nl + 1;
      if (text.trim().length > 0) yield { line: n, text };
    }
    rest = rest.slice(start);
  }
  rest += decoder.decode();
  if (rest.endsWith('\r')) rest = rest.slice(0, -1);
  n++;
  if (rest.trim().length > 0) yield { line: n, text: rest };
}
