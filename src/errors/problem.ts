// RFC 7807 problem documents: the body of every error answer, built here for every HTTP face and
// for the cache node (which answers without fastify). src/http/problem.ts sends them with fastify.

import { STATUS_CODES } from 'node:http';

export interface ProblemDocument {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: unknown;
}

export function problem(status: number, detail: string, extensions: Record<string, unknown> = {}): ProblemDocument {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...extensions };
}

/** Problem type of a build that existed and was deleted by retention or prune (404). */
export const BUILD_DELETED = { type: 'urn:buildscope:problem:build-deleted', title: 'Build deleted' } as const;
