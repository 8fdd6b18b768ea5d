// A statement's one column read through PostgreSQL's binary COPY, the values back to back in one
// buffer. Selected as rows, a bytea crosses as hex text (or base64 made by encode()), which the
// server writes and the client parses byte by byte: a Tests page's test packs (22 MB for 50,000
// builds) took about 250 ms of the server's core to aggregate and encode and 150 ms of the
// client's to receive. COPY sends each value's own bytes, framed (docs/tests.md, "Binary COPY and
// two fold threads").

import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

/** The binary COPY format's signature, the first 11 bytes of its header. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * `COPY (query) TO STDOUT` in the binary format, the query's parameters written into it as
 * literals (COPY takes no bound parameters). Numbers and bytes only: the statements read this way
 * are built by the store (ranges of seqs, a set as bytes), never from a person's text.
 */
export function binaryCopyOf(q: CompiledQuery): string {
  const literal = (p: unknown): string => {
    if (typeof p === 'number' && Number.isFinite(p)) return String(p);
    if (typeof p === 'bigint') return String(p);
    if (p instanceof Uint8Array) return `'\\x${Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('hex')}'::bytea`;
    throw new TypeError(`A statement read by COPY takes numbers and bytes as parameters, not ${typeof p}`);
  };
  // $n outside quoted literals and identifiers (the statement's own text holds none inside them).
  let text = '';
  let quote: string | undefined;
  for (let i = 0; i < q.sql.length; i++) {
    const c = q.sql[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '$' && /\d/.test(q.sql[i + 1] ?? '')) {
      let j = i + 1;
      while (/\d/.test(q.sql[j] ?? '')) j++;
      text += literal(q.parameters[Number(q.sql.slice(i + 1, j)) - 1]);
      i = j - 1;
      continue;
    }
    text += c;
  }
  return `COPY (${text}) TO STDOUT (FORMAT binary)`;
}

/**
 * The values of a one-column binary COPY's output, back to back (a null adds nothing): moved to the
 * front of `copy` itself, whose first part is returned (a value never moves past where it was, and
 * a second buffer of a range's packs, 2 MB, would only be copied once more).
 */
export function copiedValues(copy: Uint8Array): Uint8Array {
  const view = new DataView(copy.buffer, copy.byteOffset, copy.byteLength);
  if (copy.length < SIGNATURE.length + 8 || !SIGNATURE.equals(copy.subarray(0, SIGNATURE.length))) throw new Error('Not the output of a binary COPY');
  let at = SIGNATURE.length + 4;
  at += 4 + view.getUint32(at);
  let written = 0;
  for (;;) {
    if (at + 2 > copy.length) throw new Error('A binary COPY ended without its trailer');
    const fields = view.getInt16(at);
    at += 2;
    if (fields === -1) return copy.subarray(0, written);
    if (fields !== 1) throw new Error(`A binary COPY of one column sent a row of ${fields}`);
    const length = view.getInt32(at);
    at += 4;
    if (length < 0) continue;
    if (at + length > copy.length) throw new Error('A binary COPY ended within a value');
    copy.copyWithin(written, at, at + length);
    written += length;
    at += length;
  }
}

/** The statement's one column read through binary COPY on `client`, the values back to back. */
export async function readCopied(client: pg.ClientBase, q: CompiledQuery): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of client.query(copyTo(binaryCopyOf(q)))) chunks.push(chunk as Buffer);
  return copiedValues(Buffer.concat(chunks));
}
