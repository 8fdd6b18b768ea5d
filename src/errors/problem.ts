// RFC 7807 problem documents: the body of every error answer, built here for every HTTP face and
// for the cache node (which answers without fastify); src/http/problem.ts sends them with fastify.
//
// Each kind of problem has a stable, machine-readable `type`: a URN in Buildscope's own namespace,
// `urn:buildscope:problem:<kind>` (the public REST API the seeds describe does the same in its
// own namespace). Clients branch on `type` (and `status`), never on `detail`, which is prose.
// The kinds are listed in docs/server.md; a kind, once published, keeps its name.
// The provenance service answers `about:blank`, as its seed prescribes (sendBlankProblem).

import { STATUS_CODES } from 'node:http';

export interface ProblemDocument {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

export const PROBLEM_TYPE_PREFIX = 'urn:buildscope:problem:';

/** The kinds of problem; the `type` is PROBLEM_TYPE_PREFIX + kind. */
export const PROBLEM_KINDS = [
  'bad-request',
  'invalid-parameter',
  'invalid-query',
  'malformed-request',
  'unauthorized',
  'forbidden',
  'not-found',
  'method-not-allowed',
  'payload-too-large',
  'uri-too-long',
  'unsupported-media-type',
  'header-fields-too-large',
  'too-many-requests',
  'unexpected-error',
  'build-not-ready',
  'build-deleted',
  'unavailable',
  'insufficient-storage',
] as const;
export type ProblemKind = (typeof PROBLEM_KINDS)[number];

/** The kind of a problem that names none: one per status. */
export function kindOfStatus(status: number): ProblemKind {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 405:
      return 'method-not-allowed';
    case 413:
      return 'payload-too-large';
    case 414:
      return 'uri-too-long';
    case 415:
      return 'unsupported-media-type';
    case 429:
      return 'too-many-requests';
    case 431:
      return 'header-fields-too-large';
    case 503:
      return 'unavailable';
    case 507:
      return 'insufficient-storage';
    default:
      return status >= 500 ? 'unexpected-error' : 'bad-request';
  }
}

export function problemType(kind: ProblemKind): string {
  return `${PROBLEM_TYPE_PREFIX}${kind}`;
}

export function problem(status: number, detail: string, extensions: Record<string, unknown> = {}, kind: ProblemKind = kindOfStatus(status)): ProblemDocument {
  return { type: problemType(kind), title: STATUS_CODES[status] ?? 'Error', status, detail, ...extensions };
}

