// The HTTP application: fastify with OpenAPI (from the route schemas), problem+json for every
// error, authentication on every request, the REST API, then the plugins of the other faces.
//
//   const app = await buildApp({ config, database, store, logger }, { plugins: [exportPlugin] });
//   await app.listen({ host: '127.0.0.1', port: 0 });
//
// A face plugin is `FastifyPluginAsync<FacePluginOptions>`; it is registered with `{ ctx, auth }`
// and reads `request.auth` (see auth-plugin.ts) on its routes.

import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import type { ServerConfig } from '../config.js';
import type { DatabaseHandle } from '../store/database.js';
import type { BuildStore } from '../store/types.js';
import type { Logger } from '../log.js';
import { openAuth, type Auth } from '../auth/index.js';
import { authPlugin } from './auth-plugin.js';
import { sendProblem } from './problem.js';
import { apiRoutes } from './api/index.js';
import { OPENAPI_INFO } from './openapi-info.js';
import { FAVICON_SVG } from './favicon.js';

export interface AppContext {
  readonly config: ServerConfig;
  readonly database: DatabaseHandle;
  readonly store: BuildStore;
  readonly logger: Logger;
  /** Epoch-ms clock (tests move time); Date.now by default. */
  readonly clock?: () => number;
}

/** What every face plugin receives as its options. */
export interface FacePluginOptions {
  readonly ctx: AppContext;
  readonly auth: Auth;
}

export type FacePlugin = FastifyPluginAsync<FacePluginOptions>;

export interface BuildAppOptions {
  readonly plugins?: readonly FacePlugin[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Sunset date (ISO 8601) of a deprecated operation, sent as the `Sunset` header. */
    sunset?: string;
    /** When the operation was deprecated (ISO 8601), sent as the `Deprecated` header. */
    deprecatedAt?: string;
    /**
     * OpenAPI `requestBody` of an operation whose body is not validated by a schema (streamed
     * bodies such as NDJSON); documentation only.
     */
    openapiRequestBody?: Record<string, unknown>;
  }
}

export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const auth = await openAuth(ctx.database, ctx.config, ctx.clock);
  const app = Fastify({
    loggerInstance: ctx.logger,
    // One log line per request is too much at thousands of requests per second; errors are logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.limits.requestBodyBytes,
    // Build IDs are short; a longer path segment is a mistake or an attack.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Errors fastify raises before routing (a malformed URL) are problem documents too.
    frameworkErrors: (error, _request, reply) => {
      sendProblem(reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 400, error.message);
    },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
  }) as unknown as FastifyInstance;

  // Request bodies documented through route config (streamed bodies have no validation schema).
  const requestBodies = new Map<string, Record<string, unknown>>();
  app.addHook('onRoute', (route) => {
    const body = (route.config as { openapiRequestBody?: Record<string, unknown> } | undefined)?.openapiRequestBody;
    if (body === undefined) return;
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) requestBodies.set(`${m.toLowerCase()} ${path}`, body);
  });

  await app.register(swagger, {
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject: { paths?: Record<string, Record<string, Record<string, unknown>>> } }).openapiObject;
      for (const [key, body] of requestBodies) {
        const [method, path] = key.split(' ') as [string, string];
        const op = doc.paths?.[path]?.[method];
        if (op !== undefined) op['requestBody'] = body;
      }
      return doc;
    },
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access key, base64 of an access key, or an access token' },
          basic: { type: 'http', scheme: 'basic', description: 'User name and password' },
        },
      },
      security: [{ bearer: [] }, { basic: [] }],
    },
  });

  // Versioning: a route whose schema says `deprecated: true` answers with `Deprecated` (and
  // `Sunset` when its config names a date), as the API's versioning rules promise.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { deprecated?: boolean } | undefined;
    if (!schema?.deprecated) return;
    const cfg = (route.config ?? {}) as { sunset?: string; deprecatedAt?: string };
    const deprecated = cfg.deprecatedAt ? `@${Math.floor(Date.parse(cfg.deprecatedAt) / 1000)}` : 'true';
    const sunset = cfg.sunset ? new Date(cfg.sunset).toUTCString() : undefined;
    const hook = async (_req: unknown, reply: { header(k: string, v: string): unknown }) => {
      reply.header('deprecated', deprecated);
      if (sunset) reply.header('sunset', sunset);
    };
    const existing = route.onSend;
    route.onSend = existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook];
  });

  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, 404, `No resource at ${request.method} ${request.url.split('?')[0]}`);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const where = error.validationContext ?? 'request';
      return sendProblem(reply, 400, `Invalid ${where}: ${error.message}`, {
        errors: error.validation.map((v) => ({ path: `${where}${v.instancePath}`, message: v.message ?? '', params: v.params })),
      });
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendProblem(reply, status, error.message || 'Bad request');
    }
    request.log.error({ err: error, url: request.url, method: request.method }, 'request failed');
    return sendProblem(reply, status !== undefined && status >= 500 && status < 600 ? status : 500, 'The server could not complete the request; the error is logged');
  });

  await app.register(authPlugin(auth.authenticator));
  await app.register(apiRoutes, { ctx, auth });
  for (const plugin of options.plugins ?? []) await app.register(plugin, { ctx, auth });

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG),
  );
  // The root sends people to the builds list (or the playground) when it is served, else names
  // the API's entry points.
  const web = app.hasRoute({ method: 'GET', url: '/builds' });
  const playground = app.hasRoute({ method: 'GET', url: '/playground' });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    if (web) return reply.redirect('/builds', 302);
    if (playground) return reply.redirect('/playground/', 302);
    return { product: 'buildscope', builds: '/api/builds', token: '/api/auth/token', openapi: '/api/openapi.json' };
  });
  await app.ready();
  return app;
}
