// Short links: `/s/<build id>` (the form the public export API sample client prints after the
// server's address) answers a redirect to the build's page, `/builds/<build id>` (served by the
// web app). Public: a redirect reveals nothing; the page itself asks for credentials.

import { InvalidParameterError } from '../errors/domain.js';
import type { FastifyPluginAsync } from 'fastify';
import type { FacePluginOptions } from './context.js';
import { PROBLEM_RESPONSES } from './api/schemas.js';

export const linkRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const configured = ctx.config.server.publicUrl;
  app.get<{ Params: { id: string } }>(
    '/s/:id',
    {
      schema: {
        operationId: 'GetBuildLink',
        summary: 'Short link of a build',
        description:
          'Redirects (302) to the build page /builds/{id}: at server.publicUrl when it is configured, else on the address the request came to (a relative Location).',
        tags: ['server'],
        security: [],
        params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] },
        response: {
          302: { description: 'Found: Location is the build page', headers: { location: { type: 'string' } } },
          ...PROBLEM_RESPONSES([400]),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      if (id.includes('\0')) throw new InvalidParameterError('A build ID has no NUL character');
      // Relative without a configured address: the client reaches the page the way it reached us
      // (a proxy in front may know the server by another name than the listen address).
      return reply.redirect(`${configured ?? ''}/builds/${encodeURIComponent(id)}`, 302);
    },
  );
};
