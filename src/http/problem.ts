// RFC 7807 problem documents: every error response of every HTTP face goes through here.

import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';

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

export function sendProblem(reply: FastifyReply, status: number, detail: string, extensions: Record<string, unknown> = {}): FastifyReply {
  return reply.code(status).type('application/problem+json').send(problem(status, detail, extensions));
}
