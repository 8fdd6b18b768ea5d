// Splits NDJSON input (a string or a byte/string stream) into numbered lines. Line numbers count
// every line of the input, blank ones included, so that errors point at the line in the file.
// Only the line being read is held: a file of any size streams through.

export interface NumberedLine {
  readonly line: number;
  /**
   * The line without its end: text, or for a byte stream its UTF-8 bytes, decoded where the line
   * is prepared (textOf), mostly in the worker thread: the ingest's thread then holds no copy of
   * the input as text (docs/store.md, "Ingest performance").
   */
  readonly text: string | Uint8Array;
}

/** A line's text, decoded from its bytes when it holds them. */
export function textOf(l: NumberedLine): string {
  const t = l.text;
  return typeof t === 'string' ? t : Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString('utf8');
}

/**
 * Whether bytes of UTF-8 are blank as JavaScript's trim() says: white space of ASCII decided
 * here, anything else not ASCII decided on the decoded text (trim() knows U+00A0, U+2028, U+FEFF
 * and others).
 */
function blankBytes(bytes: Buffer, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    if (b < 0x80) return false;
    return bytes.toString('utf8', 0, end).trim().length === 0;
  }
  return true;
}

/** A line feed and a carriage return, as bytes. */
const LF = 0x0a;
const CR = 0x0d;
/** UTF-8's byte order mark, dropped at the start of a stream as TextDecoder drops it. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Lines of a stream that arrives in pieces (bytes split anywhere, CRLF or LF line ends). The
 * pieces are cut at their line feeds as bytes, and each line is kept as its bytes, decoded once by
 * itself where it is prepared (textOf): a line feed is never part of a longer UTF-8 sequence, so a
 * line decodes alone as it would within the whole. Decoding each piece and appending it to the rest before cutting (as this did) copied the
 * input three to four times over, and every line kept its whole piece alive: 560 MB allocated for
 * 157 MB of input, the ingest command's largest allocation (docs/store.md, "Ingest performance").
 */
class LineSplitter {
  private n = 0;
  /** The bytes of the line begun and not ended yet, in the pieces they came in. */
  private rest: Buffer[] = [];
  /** The same for a stream of strings (already text, cut at their line feeds as they are). */
  private restText = '';
  private started = false;

  /** The lines this piece completes. */
  push(piece: string | Uint8Array): NumberedLine[] {
    if (typeof piece === 'string') return this.pushText(piece);
    let bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    if (this.restText.length > 0) {
      // Bytes after text in one stream: the line begun as text goes on as bytes.
      this.rest = [Buffer.from(this.restText, 'utf8')];
      this.restText = '';
    }
    if (!this.started && bytes.length > 0) bytes = this.withoutBom(bytes);
    const out: NumberedLine[] = [];
    let start = 0;
    let nl: number;
    while ((nl = bytes.indexOf(LF, start)) !== -1) {
      const line = this.rest.length === 0 ? bytes.subarray(start, nl) : Buffer.concat([...this.rest, bytes.subarray(start, nl)]);
      this.rest = [];
      this.take(line, out);
      start = nl + 1;
    }
    if (start < bytes.length) this.rest.push(bytes.subarray(start));
    return out;
  }

  /** The last line, which has no line end. */
  end(): NumberedLine[] {
    const out: NumberedLine[] = [];
    if (this.restText.length > 0) this.takeText(this.restText, out);
    else this.take(Buffer.concat(this.rest), out);
    this.rest = [];
    this.restText = '';
    return out;
  }

  /** push() of a string: no byte order mark to drop (a string is not UTF-8 bytes). */
  private pushText(piece: string): NumberedLine[] {
    this.started = true;
    if (this.rest.length > 0) {
      this.restText = Buffer.concat(this.rest).toString('utf8');
      this.rest = [];
    }
    const out: NumberedLine[] = [];
    const text = this.restText + piece;
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) !== -1) {
      this.takeText(text.slice(start, nl), out);
      start = nl + 1;
    }
    this.restText = text.slice(start);
    return out;
  }

  /** The stream's first bytes without a byte order mark (one split over pieces included). */
  private withoutBom(bytes: Buffer): Buffer {
    const head = this.rest.length === 0 ? bytes : Buffer.concat([...this.rest, bytes]);
    if (head.length < BOM.length && BOM.subarray(0, head.length).equals(head)) {
      // Perhaps a mark, not complete yet: held until more bytes tell.
      this.rest = [head];
      return Buffer.alloc(0);
    }
    this.rest = [];
    this.started = true;
    return head.subarray(0, BOM.length).equals(BOM) ? head.subarray(BOM.length) : head;
  }

  /** Counts a line (its bytes without the line feed) and keeps its bytes unless blank. */
  private take(bytes: Buffer, out: NumberedLine[]): void {
    this.n++;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    if (!blankBytes(bytes, end)) out.push({ line: this.n, text: bytes.subarray(0, end) });
  }

  /** Counts a line of text (without its line feed) and keeps it unless blank. */
  private takeText(line: string, out: NumberedLine[]): void {
    this.n++;
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim().length > 0) out.push({ line: this.n, text });
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
