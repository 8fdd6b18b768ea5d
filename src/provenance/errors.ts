// The provenance service's errors are the domain errors every face shares (src/errors/domain.ts):
// failures of the systems it depends on (build analytics server, artifact repository, object
// store) are ExternalServiceError (500 with the seed's detail), a bad request is BadRequestError.

import { BadRequestError } from '../errors/domain.js';
import { describeDiagnostics, invalidQueryExtensions } from '../errors/query.js';
import type { Diagnostic } from '../query/diagnostic.js';

export { BadRequestError, ExternalServiceError, EXTERNAL_SERVICE_PREFIX } from '../errors/domain.js';

/** The seed's detail texts. */
export const DETAILS = {
  unauthorized: 'Full authentication is required to access this resource',
  forbidden: 'Access to this resource is forbidden',
  badCriteria: 'Invalid request content. Bad criteria (sha256 or repositoryUrl).',
  notFound: 'No attestation found matching request.',
  tooMany: 'The service is experiencing too many requests. Please try again later.',
} as const;

/** The seed's 400 for a body it cannot use; `reason` (an extension member) says what is wrong. */
export function badCriteria(reason: string): BadRequestError {
  return new BadRequestError(DETAILS.badCriteria, { extensions: { reason } });
}

/**
 * The 400 of a build scan query with diagnostics: the seed's "Invalid request content." and the
 * wording every face gives a bad query (src/errors/query.ts), with the query and its diagnostics.
 */
export function badBuildScanQuery(query: string, diagnostics: readonly Diagnostic[]): BadRequestError {
  return new BadRequestError(`Invalid request content. Bad build scan query ${JSON.stringify(query)} at ${describeDiagnostics(diagnostics)}`, {
    extensions: invalidQueryExtensions(query, diagnostics),
  });
}
