// A result set column by column: numbers in a Float64Array, text as dictionary ids into its
// distinct values. The analytics index (analytics-index.ts) reads a million builds' facet columns
// from a search thread this way: one transfer of a few typed arrays instead of a million row
// objects cloned into the server's thread, and the dictionary ids are what it counts by.

/** One column: `numbers` (null is NaN) or `strings` (id 0 is null, id i the value values[i - 1]). */
export type PackedColumn =
  | { readonly kind: 'numbers'; readonly data: Float64Array }
  | { readonly kind: 'strings'; readonly values: readonly string[]; readonly ids: Uint32Array };

export interface PackedRows {
  readonly length: number;
  readonly columns: readonly PackedColumn[];
}

/** Packs rows given as arrays of `width` values (a column holding any text is packed as text). */
export function packRows(rows: readonly (readonly unknown[])[], width: number): PackedRows {
  const columns: PackedColumn[] = [];
  for (let c = 0; c < width; c++) {
    const text = rows.some((r) => typeof r[c] === 'string');
    if (!text) {
      const data = new Float64Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const v = rows[i]![c];
        data[i] = v === null || v === undefined ? NaN : Number(v);
      }
      columns.push({ kind: 'numbers', data });
      continue;
    }
    const values: string[] = [];
    const idOf = new Map<string, number>();
    const ids = new Uint32Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i]![c];
      if (v === null || v === undefined) continue;
      const s = String(v);
      let id = idOf.get(s);
      if (id === undefined) {
        id = values.push(s);
        idOf.set(s, id);
      }
      ids[i] = id;
    }
    columns.push({ kind: 'strings', values, ids });
  }
  return { length: rows.length, columns };
}

/** The buffers of `p`, to transfer rather than copy between threads. */
export function packedBuffers(p: PackedRows): ArrayBuffer[] {
  return p.columns.map((c) => (c.kind === 'numbers' ? c.data.buffer : c.ids.buffer) as ArrayBuffer);
}
