// POST /api/auth/token (seed 002): creates an access token from an access key or access token.

import type { FastifyPluginAsync } from 'fastify';
import { decideToken, splitList } from '../../auth/token-request.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission, sendUnauthorized } from '../auth-plugin.js';
import { ForbiddenError, InvalidParameterError } from '../../errors/domain.js';
import { assertNever } from '../../query/assert.js';
import { PROBLEM_RESPONSES } from './schemas.js';

const listParam = (description: string) => ({
  type: 'array',
  items: { type: 'string', maxLength: 4096 },
  maxItems: 100,
  description,
});

export const tokenRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx, auth }) => {
  const clock = ctx.clock ?? Date.now;
  // The operation takes no body; whatever a client sends along (often an empty JSON body) is ignored.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  app.post<{ Querystring: { permissions?: string[]; projectIds?: string[]; expiresInHours?: number } }>(
    '/api/auth/token',
    {
      schema: {
        summary: 'Create an access token',
        description:
          'Creates a short-lived access token (a JWT, returned as text/plain) for the user of the authenticating access key or access token. ' +
          'The token never carries more permissions, more projects or a later expiry than the credential that asks for it. ' +
          'Tokens are valid only for this server hostname: when it changes, every earlier token is invalid.',
        tags: ['auth'],
        querystring: {
          type: 'object',
          properties: {
            permissions: listParam('Permission config values to grant; comma-separated or repeated. Default: all of the credential. A permission the credential lacks (or an unknown name) is 403.'),
            projectIds: listParam('Projects to grant (project-level access control only); comma-separated or repeated. Default: all of the credential.'),
            expiresInHours: {
              type: 'number',
              exclusiveMinimum: 0,
              maximum: 24,
              description: 'Lifetime in hours: a number above 0 (decimals such as 0.5 allowed), at most 24. Default: 2, or the remaining life of the credential when shorter. A lifetime that would outlive the credential is 403.',
            },
          },
        },
        response: {
          200: { description: 'The access token (JWT)', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...PROBLEM_RESPONSES([400, 401, 403]),
        },
      },
      preHandler: requirePermission(null),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const q = request.query;
      const expiresInHours = q.expiresInHours;
      const decision = decideToken(
        principal,
        { permissions: splitList(q.permissions), projectIds: splitList(q.projectIds), ...(expiresInHours !== undefined ? { expiresInHours } : {}) },
        ctx.config.limits,
        clock(),
      );
      if (!decision.ok) {
        switch (decision.status) {
          case 401:
            return sendUnauthorized(reply, decision.detail);
          case 403:
            throw new ForbiddenError(decision.detail);
          case 400:
            throw new InvalidParameterError(decision.detail);
          default:
            return assertNever(decision.status, 'token refusal');
        }
      }
      const token = await auth.tokens.issue(decision.claims);
      return reply.type('text/plain; charset=utf-8').send(token);
    },
  );
};
