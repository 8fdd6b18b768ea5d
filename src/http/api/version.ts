// GET /api/version: which server this is. Public: it reveals nothing but the release.

import type { FastifyPluginAsync } from 'fastify';
import type { FacePluginOptions } from '../context.js';
import { SERVER_VERSION } from '../openapi-info.js';

export const versionRoutes: FastifyPluginAsync<FacePluginOptions> = async (app) => {
  app.get(
    '/api/version',
    {
      schema: {
        summary: 'Server version',
        tags: ['server'],
        security: [],
        response: {
          200: {
            type: 'object',
            properties: { version: { type: 'string' }, product: { type: 'string' } },
            required: ['version', 'product'],
          },
        },
      },
    },
    async () => ({ product: 'buildscope', version: SERVER_VERSION }),
  );
};
