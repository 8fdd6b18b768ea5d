// The HTTP application: fastify with OpenAPI (from the route schemas), problem+json for every
// error, authentication on every request, the REST API, then the plugins of the other faces.
//
//   const app = await buildApp({ config, database, store, logger }, { plugins: [exportPlugin] });
//   await app.listen({ host: '127.0.0.1', port: 0 });
//
// A face plugin is `FastifyPluginAsync<FacePluginOptions>`; it is registered with the context and
// the server's services (`{ ctx, auth, faces, ... }`, opened once by openServices, services.ts)
// and reads `request.auth` (see auth-plugin.ts) on its routes.

import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { publicUrlOf } from '../config.js';
import type { Auth } from '../auth/index.js';
import type { AppContext, FacePlugin, ServerServices } from './context.js';
import { openServices } from './services.js';
import { authPlugin } from './auth-plugin.js';
import { operationsPlugin } from './operations-plugin.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { sendBlankProblem, sendProblem, type ProblemKind } from './problem.js';
import { answerOf, DomainError } from '../errors/domain.js';
import { apiRoutes } from './api/index.js';
import { linkRoutes } from './links.js';
import { answerClientError, drainBeforeAnswer } from './early-answers.js';
import { OPENAPI_INFO } from './openapi-info.js';
import { applyOverlay } from './openapi-overlay.js';
import { FAVICON_SVG } from './favicon.js';

export type { AppContext, FacePlugin, FacePluginOptions } from './context.js';

export interface BuildAppOptions {
  readonly plugins?: readonly FacePlugin[];
  /**
   * The server's services, as openServer opened them. A context built by hand (tests, benches, the
   * OpenAPI writer) leaves them out and they are opened by the same openServices, with the
   * `auth` and `metrics` below when it made them itself.
   */
  readonly services?: ServerServices;
  readonly auth?: Auth;
  readonly metrics?: ServerMetrics;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Sunset date (ISO 8601) of a deprecated operation, sent as the `Sunset` header. */
    sunset?: string;
    /** When the operation was deprecated (ISO 8601), sent as the `Deprecated` header. */
    deprecatedAt?: string;
    /** `about:blank`: the route's problem documents have that type (the provenance seed's rule). */
    problemType?: 'about:blank';
    /**
     * OpenAPI `requestBody` of an operation whose body is not validated by a schema (streamed
     * bodies such as NDJSON); documentation only.
     */
    openapiRequestBody?: Record<string, unknown>;
  }
}

/**
 * The one error handler of every fastify face: a DomainError is answered by its kind (answerOf:
 * status and problem type, its detail, extensions and Retry-After); fastify's own errors (schema
 * validation, a body over the limit, a body that does not parse) by their status; anything else
 * is logged and answered 500 without its message. A route whose config says
 * `problemType: 'about:blank'` (the provenance service, as its seed prescribes) gets that type.
 */
export function answerError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const blank = (request.routeOptions.config as { problemType?: string } | undefined)?.problemType === 'about:blank';
  const send = (status: number, detail: string, extensions: Record<string, unknown> = {}, kind?: ProblemKind) =>
    blank ? sendBlankProblem(reply, status, detail, extensions) : sendProblem(reply, status, detail, extensions, kind);
  if (error instanceof DomainError) {
    const { status, problem } = answerOf(error.kind);
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    // Worth a warning, as the operator may have to act: a system the server depends on failed (with
    // its cause), or a search was stopped at its time limit. A build still being stored is routine;
    // a full disk is logged once by the retention job, not per refused request.
    if (error.kind === 'external') request.log.warn({ err: error, url: request.url, method: request.method }, error.message);
    else if (error.kind === 'unavailable') request.log.warn({ url: request.url, method: request.method }, error.message);
    return send(status, error.detail, { ...error.extensions }, problem);
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const where = fastifyError.validationContext ?? 'request';
    return send(400, `Invalid ${where}: ${error.message}`, {
      errors: fastifyError.validation.map((v) => ({ path: `${where}${v.instancePath}`, message: v.message ?? '', params: v.params })),
    }, 'invalid-parameter');
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return send(status, error.message || 'Bad request');
  request.log.error({ err: error, url: request.url, method: request.method }, 'request failed');
  return send(status !== undefined && status >= 500 && status < 600 ? status : 500, 'The server could not complete the request; the error is logged');
}

export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const plugins = options.plugins ?? [];
  const app = Fastify({
    loggerInstance: ctx.logger,
    // One log line per request is too much at thousands of requests per second; errors are logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.limits.requestBodyBytes,
    // Build IDs are short; a longer path segment is a mistake or an attack.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Errors fastify raises before routing (a malformed URL) are problem documents too.
    // Errors of Node's HTTP parser (malformed request line, over 16 KB of request line and headers).
    clientErrorHandler: answerClientError,
    frameworkErrors: (error, _request, reply) => {
      sendProblem(reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 400, error.message, {}, 'malformed-request');
    },
    // strictNumbers off: with it on, ajv coerces `?since=Infinity` (or `1e400`) to Infinity and then
    // skips `minimum`/`maximum`, so the value reached the handlers (a 500). Off, the bounds apply
    // and such a value is a 400 like any other out-of-range number.
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false, strictNumbers: false } },
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
      return applyOverlay(doc);
    },
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      // Relative: the server that serves the document (its address depends on the deployment).
      servers: [{ url: '/', description: 'This server' }],
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
    // Set when the request arrives, not on send: a streaming route that hijacks the reply writes
    // reply.getHeaders() itself (onSend never runs for it), and every answer must carry them.
    const hook = async (_req: unknown, reply: { header(k: string, v: string): unknown }) => {
      reply.header('deprecated', deprecated);
      if (sunset) reply.header('sunset', sunset);
    };
    const existing = route.onRequest;
    route.onRequest = existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook];
  });

  // An answer given before the body was read waits for the body, so the client sees the answer.
  app.addHook('onSend', drainBeforeAnswer);

  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, 404, `No resource at ${request.method} ${request.url.split('?')[0]}`);
  });

  app.setErrorHandler(answerError);

  const publicUrl = () => publicUrlOf(ctx.config.server, app.server.address());
  const services =
    options.services ??
    (await openServices(ctx, { plugins, publicUrl, ...(options.auth !== undefined ? { auth: options.auth } : {}), ...(options.metrics !== undefined ? { metrics: options.metrics } : {}) }));
  await app.register(authPlugin(services.auth.authenticator));
  await app.register(operationsPlugin, { metrics: services.metrics, database: ctx.database });
  const faceOptions = { ctx, ...services, publicUrl };
  await app.register(apiRoutes, faceOptions);
  await app.register(linkRoutes, faceOptions);
  for (const plugin of plugins) await app.register(plugin, faceOptions);

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
