// The per-field columns of the `builds` table, derived from the field catalog so that the schema
// is never written twice: every single-valued field gets one column named by its `column`, typed
// by its field type. Multi-valued fields live in child rows (build_values, build_custom_values).

import { FIELDS, type FieldDef, type FieldType } from '../../query/catalog.js';

export type ColumnKind = 'text' | 'real' | 'boolean';

export interface AttributeColumn {
  readonly field: FieldDef;
  readonly column: string;
  readonly kind: ColumnKind;
}

export function columnKind(type: FieldType): ColumnKind {
  switch (type) {
    case 'string':
    case 'keyValue':
      return 'text';
    case 'number':
    case 'duration':
    case 'storageSize':
    case 'timestamp':
      return 'real';
    case 'boolean':
      return 'boolean';
  }
}

/** One column per single-valued catalog field, in catalog order. */
export const ATTRIBUTE_COLUMNS: readonly AttributeColumn[] = FIELDS.filter((f) => !f.multi).map((f) => ({
  field: f,
  column: f.column,
  kind: columnKind(f.type),
}));

/** The SQL type of an attribute column; `double precision` has REAL affinity on SQLite too. */
export function sqlType(kind: ColumnKind): 'text' | 'double precision' | 'integer' {
  switch (kind) {
    case 'text':
      return 'text';
    case 'real':
      return 'double precision';
    case 'boolean':
      return 'integer';
  }
}

/** Columns of `builds` that are not attribute columns (the catalog must not use these names). */
export const BOOKKEEPING_COLUMNS = [
  'id',
  'seq',
  'available_at',
  'tool_type',
  'tool_version',
  'agent_version',
  'project_name',
  'content_hash',
  'attributes',
  'received_at',
  // The key of the build's events (store migration 0014).
  'events_key',
] as const;
