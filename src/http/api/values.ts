// GET /api/search/values: the values of a String field seen in the caller's builds, most frequent
// first, for completion in query editors (the playground). Over the store's fieldValues.

import type { FastifyPluginAsync } from 'fastify';
import { visibilityOf } from '../../auth/types.js';
import { FIELDS, findField } from '../../query/catalog.js';
import { closest } from '../../query/suggest.js';
import { MAX_VALUES, offersDataValues } from '../../store/search/field-values.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { BadRequestError } from '../../errors/domain.js';
import { PROBLEM_RESPONSES } from './schemas.js';

const OFFERED = FIELDS.filter(offersDataValues).map((f) => f.name);

export const valueRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  app.get<{ Querystring: { field: string; prefix?: string; limit?: number } }>(
    '/api/search/values',
    {
      schema: {
        summary: 'Values of a field seen in the data',
        description:
          'The most frequent values of a String field among the builds the caller may see, lower-cased as the search compares them, most frequent first. ' +
          'For completion: the store reads a bounded number of index entries from the prefix on, so counts are exact for a narrow prefix and indicative for a wide one.',
        operationId: 'listFieldValues',
        tags: ['search'],
        querystring: {
          type: 'object',
          properties: {
            field: { type: 'string', minLength: 1, maxLength: 200, description: `A String field without a fixed set of values: ${OFFERED.join(', ')}.` },
            prefix: { type: 'string', maxLength: 200, description: 'Only values starting with this text (case-insensitive).' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_VALUES, description: `How many values at most; default 20.` },
          },
          required: ['field'],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              field: { type: 'string' },
              values: {
                type: 'array',
                items: { type: 'object', properties: { value: { type: 'string' }, count: { type: 'integer' } }, required: ['value', 'count'] },
              },
            },
            required: ['field', 'values'],
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 503]),
        },
      },
      preHandler: requirePermission('accessBuildDataViaApi'),
    },
    async (request) => {
      const { field: name, prefix = '', limit = 20 } = request.query;
      const field = findField(name);
      if (field === undefined) {
        const hint = closest(name, FIELDS.map((f) => f.name));
        throw new BadRequestError(`Unknown field ${JSON.stringify(name)}${hint !== undefined ? `; did you mean '${hint}'?` : ''}`);
      }
      if (!offersDataValues(field)) {
        throw new BadRequestError(`Values from the data are offered for String fields without a fixed set of values (${OFFERED.join(', ')}), not for '${field.name}'`);
      }
      if (prefix.includes('\0')) throw new BadRequestError('NUL characters (U+0000) are not allowed in prefix');
      const values = await ctx.store.fieldValues(field.name, { prefix, limit, visibility: visibilityOf(principalOf(request)) });
      return { field: field.name, values };
    },
  );
};
