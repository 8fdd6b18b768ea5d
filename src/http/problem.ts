// Every error response of every fastify face goes through here, as a problem document built by
// src/errors/problem.ts.

import type { FastifyReply } from 'fastify';
import { problem } from '../errors/problem.js';

export { problem, type ProblemDocument } from '../errors/problem.js';

export function sendProblem(reply: FastifyReply, status: number, detail: string, extensions: Record<string, unknown> = {}): FastifyReply {
  return reply.code(status).type('application/problem+json').send(problem(status, detail, extensions));
}
