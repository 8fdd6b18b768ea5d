// The one wording of a query that does not parse or check, for every face: the REST API, the web
// app's API, the export streams and the provenance service. The detail names where the first
// problem is (line, column and offset, so a client can point at it), what it is, a "did you mean"
// when there is one, and how many more there are; the document carries the query and every
// diagnostic (`diagnostics`), so a client can mark them all.

import type { Diagnostic } from '../query/diagnostic.js';
import { DomainError } from './domain.js';

/** Where the first problem is and what it is: `line 1, column 11 (offset 10): Expected a value.` */
export function describeDiagnostics(diagnostics: readonly Diagnostic[]): string {
  const first = diagnostics[0];
  if (!first) return 'the query is not valid';
  const more = diagnostics.length > 1 ? ` (and ${diagnostics.length - 1} more problem${diagnostics.length > 2 ? 's' : ''})` : '';
  // Messages of unknown fields already carry their "did you mean"; say it once.
  const suggestion = first.suggestion !== undefined && !first.message.includes(`'${first.suggestion}'`) ? ` Did you mean '${first.suggestion}'?` : '';
  const message = /[.?!]$/.test(first.message) ? first.message : `${first.message}.`;
  return `line ${first.line}, column ${first.column} (offset ${first.start}): ${message}${suggestion}${more}`;
}

/** The problem detail of a query with diagnostics. */
export function invalidQueryDetail(diagnostics: readonly Diagnostic[]): string {
  return `Invalid query at ${describeDiagnostics(diagnostics)}`;
}

/** The extension members of the problem document: the query as given and every diagnostic. */
export function invalidQueryExtensions(query: string, diagnostics: readonly Diagnostic[]): Record<string, unknown> {
  return { query, diagnostics };
}

/** A query with diagnostics (400, problem type invalid-query). */
export class InvalidQueryError extends DomainError {
  readonly kind = 'invalid-query';
  constructor(
    readonly query: string,
    readonly diagnostics: readonly Diagnostic[],
  ) {
    super(invalidQueryDetail(diagnostics), { extensions: invalidQueryExtensions(query, diagnostics) });
  }
}
