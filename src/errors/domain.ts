// Domain errors: what the services throw when a request cannot be answered as asked. Each carries
// a kind, and the kind alone decides the HTTP status and problem `type` (answerOf); the one error
// handler of the fastify faces (src/http/app.ts) writes the answer. Services know nothing of HTTP.
//
//   throw new BadRequestError('to must be after from');            // 400 bad-request
//   class UnknownBuildError extends DomainError { readonly kind = 'invalid-parameter' }
//
// Anything else thrown is an internal failure: logged, and answered 500 without its message.

import { assertNever } from '../query/assert.js';
import type { ProblemKind } from './problem.js';

export type DomainErrorKind =
  /** The caller asked for something that cannot be done as asked (400). */
  | 'bad-request'
  /** One named parameter has a value that is not allowed (400). */
  | 'invalid-parameter'
  /** A search query has diagnostics (400). */
  | 'invalid-query'
  /** The caller is known but may not do this with what she names (403). */
  | 'forbidden'
  /** What the caller names does not exist or is not visible to her (404). */
  | 'not-found'
  /** A build that existed was deleted by retention or prune (404). */
  | 'build-deleted'
  /** The request body is over a limit (413). */
  | 'too-large'
  /** The request body's content type is not one the operation reads (415). */
  | 'unsupported-media-type'
  /** Too many requests are running or waiting; retry later (429). */
  | 'too-many'
  /** A build exists but is still being stored; retry later (503). */
  | 'not-ready'
  /** The server cannot answer now (a search over its time limit); retry or narrow (503). */
  | 'unavailable'
  /** The disk is (nearly) full; nothing is stored (507). */
  | 'insufficient-storage'
  /** A system the service depends on failed (an object store, another server) (500). */
  | 'external';

/** The HTTP answer of a kind: its status and its problem kind (the `type` URN's last part). */
export function answerOf(kind: DomainErrorKind): { readonly status: number; readonly problem: ProblemKind } {
  switch (kind) {
    case 'bad-request':
      return { status: 400, problem: 'bad-request' };
    case 'invalid-parameter':
      return { status: 400, problem: 'invalid-parameter' };
    case 'invalid-query':
      return { status: 400, problem: 'invalid-query' };
    case 'forbidden':
      return { status: 403, problem: 'forbidden' };
    case 'not-found':
      return { status: 404, problem: 'not-found' };
    case 'build-deleted':
      return { status: 404, problem: 'build-deleted' };
    case 'too-large':
      return { status: 413, problem: 'payload-too-large' };
    case 'unsupported-media-type':
      return { status: 415, problem: 'unsupported-media-type' };
    case 'too-many':
      return { status: 429, problem: 'too-many-requests' };
    case 'not-ready':
      return { status: 503, problem: 'build-not-ready' };
    case 'unavailable':
      return { status: 503, problem: 'unavailable' };
    case 'insufficient-storage':
      return { status: 507, problem: 'insufficient-storage' };
    case 'external':
      return { status: 500, problem: 'unexpected-error' };
    default:
      return assertNever(kind, 'domain error kind');
  }
}

// Every kind once: a kind added to the union and not here is a compile error.
const KINDS: Record<DomainErrorKind, true> = {
  'bad-request': true,
  'invalid-parameter': true,
  'invalid-query': true,
  forbidden: true,
  'not-found': true,
  'build-deleted': true,
  'too-large': true,
  'unsupported-media-type': true,
  'too-many': true,
  'not-ready': true,
  unavailable: true,
  'insufficient-storage': true,
  external: true,
};
export const DOMAIN_ERROR_KINDS = Object.keys(KINDS) as readonly DomainErrorKind[];

export interface DomainErrorOptions extends ErrorOptions {
  /** Members added to the problem document (RFC 7807 extensions), e.g. `diagnostics`. */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /** Sent as `Retry-After` (seconds) with the answer. */
  readonly retryAfterSeconds?: number;
}

/** The base of every error a service throws for the caller; `message` is the problem `detail`. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.extensions = options.extensions ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The problem document's `detail`: the message, unless a kind words it for the caller. */
  get detail(): string {
    return this.message;
  }
}

/** A request that cannot be done as asked (400). */
export class BadRequestError extends DomainError {
  readonly kind = 'bad-request';
}

/** A parameter's value is not allowed (400). */
export class InvalidParameterError extends DomainError {
  readonly kind = 'invalid-parameter';
}

/** The caller may not do this with what she names (403). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
}

/** The thing asked for does not exist or is not visible (404). */
export class NotFoundError extends DomainError {
  readonly kind = 'not-found';
}

/** A request body over a limit (413). */
export class TooLargeError extends DomainError {
  readonly kind = 'too-large';
}

/** A request body of a content type the operation does not read (415). */
export class UnsupportedMediaTypeError extends DomainError {
  readonly kind = 'unsupported-media-type';
}

/** Too many requests at once (429). */
export class TooManyRequestsError extends DomainError {
  readonly kind = 'too-many';
}

/** The server cannot answer now: a part it needs is missing or not answering (503). */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable';
}

/** The disk is full (507). */
export class InsufficientStorageError extends DomainError {
  readonly kind = 'insufficient-storage';
}

export const EXTERNAL_SERVICE_PREFIX = 'An error occurred while trying to communicate with an external service:';

/**
 * A system the service depends on failed (500). The message names the system and what failed
 * ("object store obj:main: ..."); the detail prefixes the provenance seed's sentence.
 */
export class ExternalServiceError extends DomainError {
  readonly kind = 'external';
  override get detail(): string {
    return `${EXTERNAL_SERVICE_PREFIX} ${this.message}`;
  }
}
