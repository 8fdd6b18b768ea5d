// Failures of systems the provenance service depends on (build analytics server, artifact
// repository, object store). The HTTP face turns them into 500 with the seed's detail text.

export class ExternalServiceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExternalServiceError';
  }
}

export const EXTERNAL_SERVICE_PREFIX = 'An error occurred while trying to communicate with an external service:';

export function externalServiceDetail(e: ExternalServiceError): string {
  return `${EXTERNAL_SERVICE_PREFIX} ${e.message}`;
}

/** A problem with what the caller asked for (400). */
export class BadRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadRequestError';
  }
}
