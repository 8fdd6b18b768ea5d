// Every error response of every fastify face goes through here, as a problem document built by
// src/errors/problem.ts.

import type { FastifyReply } from 'fastify';
import { problem, type ProblemKind } from '../errors/problem.js';

export { kindOfStatus, problem, problemType, PROBLEM_KINDS, PROBLEM_TYPE_PREFIX, type ProblemDocument, type ProblemKind } from '../errors/problem.js';

export function sendProblem(reply: FastifyReply, status: number, detail: string, extensions: Record<string, unknown> = {}, kind?: ProblemKind): FastifyReply {
  return reply.code(status).type('application/problem+json').send(problem(status, detail, extensions, kind));
}

/** A problem document with `type: about:blank`, for the provenance service (its seed says so). */
export function sendBlankProblem(reply: FastifyReply, status: number, detail: string, extensions: Record<string, unknown> = {}): FastifyReply {
  return reply.code(status).type('application/problem+json').send({ ...problem(status, detail, extensions), type: 'about:blank' });
}
