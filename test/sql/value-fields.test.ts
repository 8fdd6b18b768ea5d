// The codes build_values and build_value_terms store for a field (store migration 0016): every
// multi-valued field of the catalog has one, and no code handed out is ever changed or reused
// (stored rows carry them). The snapshot below only ever grows at its end.

import { describe, expect, it } from 'vitest';
import { FIELDS } from '../../src/query/catalog.js';
import { VALUE_FIELD_CODES, valueFieldCode, valueFieldCodeCase } from '../../src/sql/value-fields.js';

/** The codes as released. Append a new field's code here; never edit or remove a line. */
const RELEASED: readonly (readonly [string, number])[] = [
  ['requested', 1],
  ['tag', 2],
  ['native_requestedtasks', 3],
  ['native_environment_localipaddress', 4],
  ['jvmbuild_requestedgoals', 5],
  ['jvmbuild_environment_localipaddress', 6],
  ['targetbuild_requestedtargets', 7],
  ['scalabuild_requestedtasks', 8],
  ['scalabuild_environment_localipaddress', 9],
  ['jsbuild_requestedcommands', 10],
  ['pybuild_requestedcommands', 11],
  ['failedtest', 12],
];

describe('value field codes', () => {
  it('keeps every released code', () => {
    for (const [column, code] of RELEASED) expect(VALUE_FIELD_CODES[column], column).toBe(code);
  });

  it('hands out each code once, from 1 up without gaps, and only appends', () => {
    const codes = Object.values(VALUE_FIELD_CODES).sort((a, b) => a - b);
    expect(codes).toEqual(codes.map((_, i) => i + 1));
    // Codes beyond the released ones are new fields, numbered after them.
    const released = new Set(RELEASED.map(([c]) => c));
    for (const [column, code] of Object.entries(VALUE_FIELD_CODES)) {
      if (!released.has(column)) expect(code, column).toBeGreaterThan(RELEASED.length);
    }
  });

  it('has a code for every multi-valued string field of the catalog', () => {
    const multi = FIELDS.filter((f) => f.multi && f.type !== 'keyValue').map((f) => f.column);
    expect(multi.length).toBeGreaterThan(0);
    for (const column of multi) expect(Object.keys(VALUE_FIELD_CODES), column).toContain(column);
    // No code for a field whose values are not build_values rows (custom values, single-valued fields).
    for (const f of FIELDS.filter((x) => !x.multi || x.type === 'keyValue')) expect(Object.keys(VALUE_FIELD_CODES), f.column).not.toContain(f.column);
  });

  it('fits one byte of a SQLite record and a PostgreSQL smallint', () => {
    // SQLite stores 1..127 in one byte (0 and 1 even in none, but 0 is not handed out).
    expect(Math.max(...Object.values(VALUE_FIELD_CODES))).toBeLessThanOrEqual(127);
  });

  it('maps a column to its code, and refuses anything else', () => {
    expect(valueFieldCode('tag')).toBe(2);
    expect(() => valueFieldCode('user')).toThrow(/not a multi-valued field column/);
    expect(() => valueFieldCode('value')).toThrow(/not a multi-valued field column/);
    expect(valueFieldCodeCase('f')).toContain("WHEN 'tag' THEN 2");
  });
});
