// HTTP face of the cache node registry:
//   PUT /api/build-cache/node-status   a node reports (key and secret in the JSON body)
//   GET /api/build-cache/nodes         registered nodes (permission manageCacheNodes)
//   GET /api/build-cache/nodes/{name}  one node (permission manageCacheNodes)
// Node credentials travel in the body, not in Authorization, so they never reach the user
// authenticator (whose Basic scheme means user name and password).

import { BadRequestError, NotFoundError } from '../errors/domain.js';
import type { FastifyPluginAsync } from 'fastify';
import { served, type FacePluginOptions } from './context.js';
import { requirePermission } from './auth-plugin.js';
import { sendProblem } from './problem.js';
import { MAX_NODE_ADDRESS_LENGTH, NODE_NAME_PATTERN, reportProblem } from '../cache-registry/registry.js';

const reportBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'secret', 'nodeAddress', 'status'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 200 },
    secret: { type: 'string', minLength: 1, maxLength: 500 },
    nodeAddress: { type: 'string', minLength: 1, maxLength: MAX_NODE_ADDRESS_LENGTH, description: 'http or https URL of the node' },
    status: { type: 'object', description: 'The node\'s /status.json object: at most 64 KiB as JSON, 8 levels deep, no NUL characters' },
  },
} as const;

const nodeSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    key: { type: 'string' },
    createdAt: { type: 'integer', description: 'epoch ms when the credentials were created' },
    registered: { type: 'boolean' },
    address: { type: ['string', 'null'] },
    registeredAt: { type: ['integer', 'null'] },
    lastSeenAt: { type: ['integer', 'null'] },
    state: { type: 'string', enum: ['never-registered', 'online', 'offline'] },
    status: { type: ['object', 'null'], additionalProperties: true },
  },
} as const;

// The registry is opened by the composition root (src/http/services.ts) with the `cacheNodes` settings.
export const cacheRegistryPlugin: FastifyPluginAsync<FacePluginOptions> = async (app, opts) => {
  const registry = served(opts.cacheRegistry, 'cache registry');

  app.put<{ Body: { key: string; secret: string; nodeAddress: string; status: Record<string, unknown> } }>(
    '/api/build-cache/node-status',
    { schema: { tags: ['cache nodes'], summary: 'A cache node reports its address and status', body: reportBody } },
    async (request, reply) => {
      const problem = reportProblem(request.body);
      if (problem !== undefined) throw new BadRequestError(`Malformed node report: ${problem}`);
      const name = await registry.report(request.body);
      if (name === null) {
        reply.header('www-authenticate', 'NodeKey realm="buildscope"');
        return sendProblem(reply, 401, 'Unknown node key or wrong node secret; create credentials with `buildscope cache-node credentials NAME`');
      }
      request.log.debug({ node: name }, 'cache node reported');
      return { name };
    },
  );

  app.get(
    '/api/build-cache/nodes',
    { preHandler: requirePermission('manageCacheNodes'), schema: { tags: ['cache nodes'], summary: 'Registered cache nodes', response: { 200: { type: 'object', properties: { nodes: { type: 'array', items: nodeSchema } } } } } },
    async () => ({ nodes: await registry.list() }),
  );

  app.get<{ Params: { name: string } }>(
    '/api/build-cache/nodes/:name',
    { preHandler: requirePermission('manageCacheNodes'), schema: { tags: ['cache nodes'], summary: 'One cache node', response: { 200: nodeSchema } } },
    async (request, reply) => {
      const { name } = request.params;
      if (!NODE_NAME_PATTERN.test(name)) throw new BadRequestError(`Not a node name: ${JSON.stringify(name)}`);
      const node = await registry.get(name);
      if (!node) throw new NotFoundError(`No cache node named '${name}'; create one with \`buildscope cache-node credentials ${name}\``);
      return node;
    },
  );
};
