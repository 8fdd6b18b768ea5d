// The error both pages throw for a failed request to the server, so that a page tells a refusal
// (401, 403) or a missing build (404) from a network failure by its status.

/** A failed request, with the server's RFC 7807 detail when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
