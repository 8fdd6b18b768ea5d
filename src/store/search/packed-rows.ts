// A result set column by column: numbers in a Float64Array, text as dictionary ids into its
// distinct values. The analytics index (analytics-index.ts) reads a million builds' facet columns
// from a search thread this way: one transfer of a few typed arrays instead of a million row
// objects cloned into the server's thread, and the dictionary ids are what it counts by.
import { assertNever } from '../../query/assert.js';


/** One column: `numbers` (null is NaN) or `strings` (id 0 is null, id i the value values[i - 1]). */
export type PackedColumn =
  | { readonly kind: 'numbers'; readonly data: Float64Array }
  | { readonly kind: 'strings'; readonly values: readonly string[]; readonly ids: Uint32Array };

export interface PackedRows {
  readonly length: number;
  readonly columns: readonly PackedColumn[];
}

/**
 * Packs rows given as arrays of `width` values, one at a time (a search thread iterates a
 * statement's rows into it without holding them all). A column holding any text is packed as
 * text, its numbers as their decimal text.
 */
export function packRows(rows: Iterable<readonly unknown[]>, width: number): PackedRows {
  const columns = Array.from({ length: width }, () => new ColumnPacker());
  let length = 0;
  for (const row of rows) {
    for (let c = 0; c < width; c++) columns[c]!.push(row[c]);
    length++;
  }
  return { length, columns: columns.map((c) => c.packed()) };
}

class ColumnPacker {
  private numbers: number[] | undefined = [];
  private ids: number[] = [];
  private readonly values: string[] = [];
  private readonly idOf = new Map<string, number>();

  push(v: unknown): void {
    if (this.numbers !== undefined && typeof v !== 'string') {
      this.numbers.push(v === null || v === undefined ? NaN : Number(v));
      return;
    }
    if (this.numbers !== undefined) {
      // The first text: the numbers so far become text too.
      this.ids = this.numbers.map((n) => (Number.isNaN(n) ? 0 : this.id(String(n))));
      this.numbers = undefined;
    }
    this.ids.push(v === null || v === undefined ? 0 : this.id(String(v)));
  }

  private id(s: string): number {
    let id = this.idOf.get(s);
    if (id === undefined) {
      id = this.values.push(s);
      this.idOf.set(s, id);
    }
    return id;
  }

  packed(): PackedColumn {
    if (this.numbers !== undefined) return { kind: 'numbers', data: Float64Array.from(this.numbers) };
    return { kind: 'strings', values: this.values, ids: Uint32Array.from(this.ids) };
  }
}

/** The buffers of `p`, to transfer rather than copy between threads. */
export function packedBuffers(p: PackedRows): ArrayBuffer[] {
  return p.columns.map((c) => (c.kind === 'numbers' ? c.data.buffer : c.ids.buffer) as ArrayBuffer);
}

/** The numbers of one packed column (a column of text, which SQLite may give for numbers, parsed). */
export function numbersOf(column: PackedColumn): Float64Array {
  switch (column.kind) {
    case 'numbers':
      return column.data;
    case 'strings':
      return Float64Array.from(column.ids, (id) => (id === 0 ? NaN : Number(column.values[id - 1])));
    default:
      return assertNever(column, 'packed column');
  }
}

/** Row `r`'s text of one packed column: undefined for null (a column of numbers only: all null, or numbers, as their text). */
export function textOf(column: PackedColumn, r: number): string | undefined {
  switch (column.kind) {
    case 'numbers': {
      const n = column.data[r]!;
      return Number.isNaN(n) ? undefined : String(n);
    }
    case 'strings': {
      const id = column.ids[r]!;
      return id === 0 ? undefined : column.values[id - 1];
    }
    default:
      return assertNever(column, 'packed column');
  }
}
