// Completion of values seen in the data (projects, users, tags, host names: String fields without
// a fixed set of values), as a CodeMirror completion source. Kept apart from the editor so that
// any CodeMirror editor of the query language can add it next to the language's own completion:
//
//   autocompletion({ override: [languageSource, dataValueCompletion(fetchFieldValues)] })
//
// Where a value is typed comes from the query library (valuePosition); the values come from
// `fetchValues`, normally GET /api/search/values (fetchFieldValues below), which counts only the
// builds the signed-in caller may see.

import type { Completion, CompletionContext, CompletionResult, CompletionSource } from '@codemirror/autocomplete';
import { offersDataValues, quoteValue, valuePosition } from '../../src/query/index.js';

export interface FieldValue {
  readonly value: string;
  readonly count: number;
}

/** The most frequent values of `field` starting with `prefix`; [] when there are none or they cannot be had. */
export type FetchValues = (field: string, prefix: string, signal: AbortSignal) => Promise<readonly FieldValue[]>;

/** Values from GET /api/search/values of the page's own origin; [] when signed out or on any failure. */
export function fetchFieldValues(accessKey: () => string | null, limit = 12): FetchValues {
  return async (field, prefix, signal) => {
    const key = accessKey();
    // Signed out, the route answers 401: do not ask.
    if (key === null) return [];
    const params = new URLSearchParams({ field, prefix, limit: String(limit) });
    try {
      const res = await fetch(`/api/search/values?${params}`, { headers: { accept: 'application/json', authorization: `Bearer ${key}` }, signal });
      if (!res.ok) return [];
      return ((await res.json()) as { values: FieldValue[] }).values;
    } catch {
      return [];
    }
  };
}

/** A completion source that offers the values `fetchValues` returns where a value of such a field is typed. */
export function dataValueCompletion(fetchValues: FetchValues): CompletionSource {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const text = ctx.state.doc.toString();
    const at = valuePosition(text, ctx.pos);
    // Only after ':' (a value pattern), on fields whose values are open-ended.
    if (at === undefined || at.op !== ':' || !offersDataValues(at.field)) return null;
    // A wildcard or an escape is a pattern being written, not a value being picked.
    if (/[*\\]/.test(at.prefix)) return null;
    const abort = new AbortController();
    ctx.addEventListener('abort', () => abort.abort());
    const values = await fetchValues(at.field.name, at.prefix, abort.signal);
    if (ctx.aborted || values.length === 0) return null;
    const options: Completion[] = values.map((v, i) => ({
      label: v.value,
      type: 'text',
      detail: `${v.count} build${v.count === 1 ? '' : 's'}`,
      // Seen in the data: after the language's own suggestions of the same prefix, in order of frequency.
      boost: -1 - i / values.length,
      apply: quoteValue(v.value),
    }));
    return { from: at.from, to: at.to, options, filter: false };
  };
}
