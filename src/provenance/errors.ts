// The provenance service's errors are the domain errors every face shares (src/errors/domain.ts):
// failures of the systems it depends on (build analytics server, artifact repository, object
// store) are ExternalServiceError (500 with the seed's detail), a bad request is BadRequestError.

import { BadRequestError } from '../errors/domain.js';

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
