// Operations: Prometheus metrics of every request (a hook on the whole app), `GET /metrics`
// (permission `readMetrics`), and the health checks `GET /health/live` (the process answers) and
// `GET /health/ready` (the database answers; the migrations ran before the app was built), which
// need no credentials so that orchestrators can call them.

import { UnavailableError } from '../errors/domain.js';
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { requirePermission } from './auth-plugin.js';

export interface OperationsOptions {
  readonly metrics: ServerMetrics;
  readonly database: DatabaseHandle;
}

const healthSchema = (summary: string, description: string) => ({
  tags: ['operations'],
  summary,
  description,
  security: [],
  response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } },
});

export const operationsPlugin = fp<OperationsOptions>(
  async (app, { metrics, database }) => {
    app.addHook('onRequest', async (request, reply) => {
      const finish = metrics.startRequest(request.method, request.routeOptions.url ?? 'unmatched');
      // 'close' comes once the response is sent or the connection is cut, also for streams
      // written on a hijacked reply, which skip fastify's own onResponse hooks.
      reply.raw.once('close', () => finish(reply.raw.statusCode));
    });

    app.get(
      '/metrics',
      {
        preHandler: requirePermission('readMetrics'),
        schema: { tags: ['operations'], summary: 'Server metrics', description: 'Server metrics in the Prometheus text format (permission readMetrics).', produces: ['text/plain'] },
      },
      async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );

    app.get('/health/live', { schema: healthSchema('Liveness', 'The process answers.') }, async () => ({ status: 'live' }));

    app.get('/health/ready', { schema: healthSchema('Readiness', 'The database answers and its migrations ran: the server can serve requests.') }, async (_request, reply) => {
      try {
        await sql`SELECT 1`.execute(database.db);
      } catch (e) {
        throw new UnavailableError(`The database does not answer: ${(e as Error).message}`);
      }
      return { status: 'ready' };
    });
  },
  { name: 'buildscope-operations' },
);
