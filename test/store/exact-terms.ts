// Exact terms drawn from a stored build's own attributes: queries each build is known to match,
// for the posting tests (bitmaps and their upkeep under deletions).

import { FIELDS, type FieldDef } from '../../src/query/catalog.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import type { BuildWithAttributes } from '../../src/store/types.js';

export const SPAN = { start: 0, end: 0 };

/** One exact term per string or boolean value of the build (multi-valued fields: each value). */
export function exactTermsOf(b: BuildWithAttributes): CheckedExpr[] {
  const out: CheckedExpr[] = [];
  for (const f of FIELDS as readonly FieldDef[]) {
    if (f.type !== 'string' && f.type !== 'boolean') continue;
    const raw = b.attributes[f.name];
    for (const v of (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) as unknown[]) {
      if (typeof v === 'string' && f.type === 'string') out.push({ kind: 'term', field: f, predicate: { kind: 'pattern', pattern: { segments: [v.toLowerCase()], text: v } }, span: SPAN });
      if (typeof v === 'boolean') out.push({ kind: 'term', field: f, predicate: { kind: 'boolean', value: v }, span: SPAN });
    }
  }
  return out;
}
