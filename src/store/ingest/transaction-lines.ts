// The input lines of an ingest's open transaction, kept in a temporary file until it commits.
//
// A bulk load on SQLite writes its parts without a savepoint each (see ingest.ts): a savepoint
// makes SQLite copy every page the part changes for the first time into its sub-journal, and in a
// large store, where most index inserts land on a page of their own, that copying cost ~10% of
// the load. Without it, a part that fails in the database leaves the transaction half-written, so
// the ingest rolls the whole transaction back and writes its lines again, each part under a
// savepoint. Those lines are here. A file, not memory: a bulk transaction is 10,000 lines
// (~50 MB of NDJSON), which would add its size to the peak memory of every load for a path that
// runs only when a line fails in the database.

import { randomUUID } from 'node:crypto';
import { closeSync, createReadStream, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NumberedLine } from './lines.js';

export interface TransactionLines {
  /** Adds a part's lines (in input order). */
  add(lines: readonly NumberedLine[]): void;
  /** Forgets every line: the transaction ended. */
  clear(): void;
  /** The lines added since the last `clear`, in order, in parts of at most `size` lines. */
  parts(size: number): AsyncGenerator<NumberedLine[]>;
  /**
   * Removes the file. Never throws: a file that cannot be removed is left to the cleaning of the
   * temporary directory, and must not hide how the load ended.
   */
  close(): void;
}

/** The largest buffer kept between parts for their records (a part of bigger lines gets one of its own). */
const MAX_SCRATCH = 4 * 1024 * 1024;

/** Lines in a temporary file, created at the first `add` and removed at once (see `open`), as `LINE<TAB>TEXT` per line. */
export function transactionLines(): TransactionLines {
  let file: { fd: number; path: string | undefined } | undefined;
  let size = 0;
  let scratch = Buffer.alloc(0);
  const open = (): { fd: number; path: string | undefined } => {
    if (file !== undefined) return file;
    const path = join(tmpdir(), `buildscope-ingest-${randomUUID()}`);
    const fd = openSync(path, 'wx+', 0o600);
    // Removed at once, kept open: the file lives as long as its descriptor, so even a load that
    // is killed leaves nothing behind. (Where an open file cannot be removed, `close` removes it.)
    try {
      unlinkSync(path);
      file = { fd, path: undefined };
    } catch {
      file = { fd, path };
    }
    return file;
  };
  return {
    add(lines) {
      if (lines.length === 0) return;
      const { fd } = open();
      // Texts hold no line end (the input was split at them), so one record per line, encoded
      // into one buffer kept for the next part: the part's records concatenated into one string
      // (as before) were copied once more to be flattened, 262 MB allocated over a load of 157 MB.
      let bytes = 0;
      for (const l of lines) bytes += String(l.line).length + 2 + (typeof l.text === 'string' ? Buffer.byteLength(l.text, 'utf8') : l.text.byteLength);
      const into = bytes <= MAX_SCRATCH ? (scratch = scratch.length >= bytes ? scratch : Buffer.allocUnsafe(Math.min(MAX_SCRATCH, Math.max(bytes, scratch.length * 2)))) : Buffer.allocUnsafe(bytes);
      let at = 0;
      for (const l of lines) {
        at += into.write(`${l.line}\t`, at, 'latin1');
        if (typeof l.text === 'string') at += into.write(l.text, at, 'utf8');
        else {
          into.set(l.text, at);
          at += l.text.byteLength;
        }
        into[at++] = 0x0a;
      }
      size += writeSync(fd, into, 0, at, size);
    },
    clear() {
      // The next lines overwrite these (what lies beyond `size` is never read): truncating would
      // have the file system free and allocate the same blocks again at every commit.
      size = 0;
    },
    async *parts(partSize) {
      if (file === undefined || size === 0) return;
      let part: NumberedLine[] = [];
      let rest = '';
      const decoder = new TextDecoder('utf-8');
      const stream = createReadStream('', { fd: file.fd, start: 0, end: size - 1, autoClose: false, highWaterMark: 1 << 20 });
      for await (const piece of stream as AsyncIterable<Buffer>) {
        // Split at line ends only (a text keeps any carriage return exactly as it came).
        const records = (rest + decoder.decode(piece, { stream: true })).split('\n');
        rest = records.pop()!;
        for (const r of records) {
          const tab = r.indexOf('\t');
          part.push({ line: Number(r.slice(0, tab)), text: r.slice(tab + 1) });
          if (part.length === partSize) {
            yield part;
            part = [];
          }
        }
      }
      if (part.length > 0) yield part;
    },
    close() {
      if (file === undefined) return;
      const { fd, path } = file;
      file = undefined;
      size = 0;
      for (const release of [() => closeSync(fd), () => path !== undefined && rmSync(path, { force: true })]) {
        try {
          release();
        } catch {
          // See above.
        }
      }
    },
  };
}
