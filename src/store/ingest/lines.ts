// Splits NDJSON input (a string or a byte/string stream) into numbered lines. Line numbers count
// every line of the input, blank ones included, so that errors point at the line in the file.
// Only the line being read is held: a file of any size streams through.

export interface NumberedLine {
  readonly line: number;
  readonly text: string;
}

/** Lines of a stream that arrives in pieces (bytes split anywhere, CRLF or LF line ends). */
class LineSplitter {
  private n = 0;
  private rest = '';
  private readonly decoder = new TextDecoder('utf-8');

  /** The lines this piece completes. */
  push(piece: string | Uint8Array): NumberedLine[] {
    const out: NumberedLine[] = [];
    this.rest += typeof piece === 'string' ? piece : this.decoder.decode(piece, { stream: true });
    const rest = this.rest;
    let start = 0;
    let nl: number;
    while ((nl = rest.indexOf('\n', start)) !== -1) {
      this.n++;
      let text = rest.slice(start, nl);
      if (text.endsWith('\r')) text = text.slice(0, -1);
      start = nl + 1;
      if (text.trim().length > 0) out.push({ line: this.n, text });
    }
    this.rest = rest.slice(start);
    return out;
  }

  /** The last line, which has no line end. */
  end(): NumberedLine[] {
    let rest = this.rest + this.decoder.decode();
    this.rest = '';
    if (rest.endsWith('\r')) rest = rest.slice(0, -1);
    this.n++;
    return rest.trim().length > 0 ? [{ line: this.n, text: rest }] : [];
  }
}

/**
 * The input's non-blank lines, in arrays: every complete line of each piece of the input as it arrives (a
 * string input in arrays of at most 1,000 lines), so that a reader can tell a stalled input from
 * one that is still being read without a timer per line.
 */
export async function* numberedLineChunks(input: string | AsyncIterable<string | Uint8Array>): AsyncGenerator<NumberedLine[]> {
  if (typeof input === 'string') {
    let n = 0;
    let out: NumberedLine[] = [];
    for (const raw of input.split('\n')) {
      n++;
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (text.trim().length > 0) out.push({ line: n, text });
      if (out.length === 1000) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
    return;
  }
  const splitter = new LineSplitter();
  for await (const piece of input) {
    const lines = splitter.push(piece);
    if (lines.length > 0) yield lines;
  }
  const last = splitter.end();
  if (last.length > 0) yield last;
}
