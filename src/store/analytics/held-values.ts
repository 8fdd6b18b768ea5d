// What the analytics index (analytics-index.ts) holds of the text values of builds: a dictionary
// per field, and for a multi-valued field (tags, requested tasks) each build's values as ids in
// one array, by seq.

import { assertNever } from '../../query/assert.js';
import type { PackedColumn } from '../search/packed-rows.js';
import { grow } from './small-numbers.js';

/** Text values by id; id 0 is null. */
export class Dictionary {
  readonly values: string[] = [''];
  private readonly ids = new Map<string, number>();

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.push(value) - 1;
      this.ids.set(value, id);
    }
    return id;
  }

  /** The id of a value held, without adding it (-1: no build has it). */
  find(value: string): number {
    return this.ids.get(value) ?? -1;
  }
}

/**
 * Ids in `dictionary` of one packed text column (a column of only nulls packs as numbers): of
 * every row, or of the rows `rows` lists, in their order. Only the values of those rows are added.
 */
export function idsOf(column: PackedColumn, dictionary: Dictionary, rows?: readonly number[]): Uint32Array {
  const n = rows === undefined ? (column.kind === 'strings' ? column.ids.length : column.data.length) : rows.length;
  const out = new Uint32Array(n);
  switch (column.kind) {
    case 'strings': {
      // The packed column's own ids (1-based, 0 for null) to this dictionary's, as they are met.
      const map = new Int32Array(column.values.length).fill(-1);
      for (let k = 0; k < n; k++) {
        const packed = column.ids[rows === undefined ? k : rows[k]!]!;
        if (packed === 0) continue;
        if (map[packed - 1] === -1) map[packed - 1] = dictionary.id(column.values[packed - 1]!);
        out[k] = map[packed - 1]!;
      }
      return out;
    }
    case 'numbers':
      for (let k = 0; k < n; k++) {
        const v = column.data[rows === undefined ? k : rows[k]!]!;
        out[k] = Number.isNaN(v) ? 0 : dictionary.id(String(v));
      }
      return out;
    default:
      return assertNever(column, 'packed column');
  }
}

/**
 * A multi-valued field's values of each build: those of seq s are ids[start[s] .. start[s + 1]),
 * a build's values in the order read, repeats kept (a build matches once however many match).
 */
export class HeldValues {
  readonly dictionary = new Dictionary();
  private start = new Uint32Array(1);
  private ids = new Uint32Array(0);
  private count = 0;

  /** Values held, over all builds. */
  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.start.byteLength + this.ids.byteLength;
  }

  /** Forgets every build's values (the index reads again from seq 1). */
  clear(): void {
    this.count = 0;
  }

  /**
   * Appends the values of the builds with seq in (from, to], after those up to `from`: `seqs`
   * ascending, `ids` of this dictionary, one per value.
   */
  append(from: number, to: number, seqs: ArrayLike<number>, ids: ArrayLike<number>): void {
    this.start = grow(this.start, to + 2);
    this.ids = grow(this.ids, this.count + seqs.length);
    let k = 0;
    for (let s = from + 1; s <= to; s++) {
      this.start[s] = this.count;
      while (k < seqs.length && seqs[k] === s) this.ids[this.count++] = ids[k++]!;
    }
    this.start[to + 1] = this.count;
  }

  /** Counts each value of the build at `seq` into `counts` (by id). */
  countInto(seq: number, counts: Uint32Array): void {
    for (let k = this.start[seq]!; k < this.start[seq + 1]!; k++) counts[this.ids[k]!]!++;
  }

  /** Sets the bit of each build with seq in (from, to] that has a value whose id `matches` marks. */
  mark(matches: Uint8Array, from: number, to: number, words: Uint32Array): void {
    const { start, ids } = this;
    for (let s = from + 1; s <= to; s++) {
      for (let k = start[s]!; k < start[s + 1]!; k++) {
        if (matches[ids[k]!] === 1) {
          words[s >>> 5] = words[s >>> 5]! | (1 << (s & 31));
          break;
        }
      }
    }
  }
}
