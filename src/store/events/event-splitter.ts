// Splits the text of a stored chunk (a JSON array, event-codec.ts) into the texts of its
// elements as the text arrives in slices, so that a reader can decode and send one event at a
// time and hold one slice, never the whole chunk decoded. A build ingested in one line is one
// chunk: 100,000 events decoded at once are tens of MB per reader (docs/export.md, "Memory per
// connection"). Only the element boundaries are found here; each element is parsed by JSON.parse.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

export class ArrayElementSplitter {
  /** Nesting depth: 1 inside the outer array, more inside an element. */
  #depth = 0;
  #inString = false;
  #escape = false;
  #finished = false;
  /** The start of the current element, from earlier slices. */
  #carry = '';

  /**
   * Feeds the next slice and yields the text of every element it completes. The generator must be
   * run to its end before the next call.
   */
  *push(text: string): Generator<string> {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      if (this.#finished) break;
      const c = text.charCodeAt(i);
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (c === BACKSLASH) this.#escape = true;
        else if (c === QUOTE) this.#inString = false;
        continue;
      }
      switch (c) {
        case QUOTE:
          this.#inString = true;
          break;
        case OPEN_BRACKET:
        case OPEN_BRACE:
          if (this.#depth === 0) start = i + 1;
          this.#depth++;
          break;
        case CLOSE_BRACKET:
        case CLOSE_BRACE:
          this.#depth--;
          if (this.#depth === 0) {
            this.#finished = true;
            const last = this.#take(text, start, i);
            if (last !== '') yield last;
          }
          break;
        case COMMA:
          if (this.#depth === 1) {
            yield this.#take(text, start, i);
            start = i + 1;
          }
          break;
      }
    }
    if (this.#depth > 0) this.#carry += text.slice(start);
  }

  /** Throws unless the outer array was closed. */
  end(): void {
    if (!this.#finished) throw new Error('Stored events are cut short: the chunk ends inside its array');
  }

  #take(text: string, start: number, end: number): string {
    const element = (this.#carry + text.slice(start, end)).trim();
    this.#carry = '';
    return element;
  }
}
