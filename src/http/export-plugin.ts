// The build export API (seed 001): SSE streams under /build-export/v1 and /build-export/v2.
//
//   const app = await buildApp(ctx, { plugins: [exportPlugin] });
//
// Routes are thin: authenticate, parse, ask src/export for a Plan, then either answer a problem
// document / 204, or hijack the reply and let the plan write the stream to the raw response
// (fastify must not answer a second time). Options come from the config section `export`.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { FacePlugin } from './context.js';
import { sendProblem } from './problem.js';
import { answerOf } from '../errors/domain.js';
import { invalidQueryDetail, invalidQueryExtensions } from '../errors/query.js';
import { authorize as accessOf, sendRefusal as sendAccessRefusal } from './auth-plugin.js';
import { SEE_EVERYTHING, type Visibility } from '../store/types.js';
import { parseQuery } from '../query/index.js';
import type { CheckedExpr } from '../query/checked.js';
import type { ExportOptions } from '../export/options.js';
import { isStreaming, parseBuildId, parseEventTypes, parseSinceDate, refuse, type Refusal } from '../export/params.js';
import { planEvents, planListing, type Plan } from '../export/streams.js';
import { acceptsGzip, SseSink } from '../export/sink.js';
import type { ApiVersion } from '../export/messages.js';

export const EXPORT_PREFIX = '/build-export';
/** When version 1 of the export API was deprecated: the first release serving version 2. */
export const V1_DEPRECATED_AT = '2026-11-21T00:00:00Z';

/** Headers of every SSE response; X-Accel-Buffering stops nginx-style proxies from buffering (seed rule 7). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

/**
 * A listing asked with `Prefer: count=exact` (RFC 7240; the form PostgREST uses) answers with the
 * number of builds available to send when it started, so that a client (`mirror`) can show a
 * total and an ETA. Without the preference nothing is counted: a listing costs what it did.
 */
export const BUILD_COUNT_HEADER = 'buildscope-build-count';

function prefersCount(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((v) => v.split(',').some((p) => p.trim().toLowerCase() === 'count=exact'));
}

const CORS_ALLOW_HEADERS = 'Authorization, Last-Event-ID, Accept, Accept-Encoding, Cache-Control, Prefer';
const CORS_EXPOSE_HEADERS = 'Retry-After, Content-Encoding, Buildscope-Build-Count, Preference-Applied';

interface Params {
  date?: string;
  buildId?: string;
}
type Query = Record<string, unknown>;

/** The CORS headers for a request's Origin, or none when the origin is not allowed. */
function corsHeaders(options: ExportOptions, origin: string | undefined): Record<string, string> {
  if (options.corsOrigins === '*') {
    // Echo the origin (with Vary) rather than `*`, so that clients sending credentials work too.
    return origin === undefined
      ? { 'access-control-allow-origin': '*', 'access-control-expose-headers': CORS_EXPOSE_HEADERS }
      : { 'access-control-allow-origin': origin, 'access-control-expose-headers': CORS_EXPOSE_HEADERS, vary: 'Origin' };
  }
  if (origin === undefined || !options.corsOrigins.includes(origin)) return {};
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': CORS_EXPOSE_HEADERS, vary: 'Origin' };
}

/** Bearer requests get CORS headers (seed: browser clients need bearer); Basic ones never do. */
function isBearer(request: FastifyRequest): boolean {
  return /^\s*bearer\s/i.test(request.headers.authorization ?? '');
}

/** Answers a refusal by its kind (status and problem type as for a thrown domain error), with the CORS headers. */
function sendRefusal(reply: FastifyReply, refusal: Refusal, headers: Record<string, string>): FastifyReply {
  reply.headers(headers);
  if (refusal.retryAfterSeconds !== undefined) reply.header('retry-after', String(refusal.retryAfterSeconds));
  const { status, problem } = answerOf(refusal.error);
  return sendProblem(reply, status, refusal.detail, refusal.extensions ?? {}, problem);
}

export const exportPlugin: FacePlugin = async (app, { ctx, faces }) => {
  const options = faces.export;
  const clock = ctx.clock ?? Date.now;
  const active = new Set<SseSink>();

  // Open streams would keep close() waiting forever: end them when the server shuts down.
  app.addHook('preClose', async () => {
    for (const sink of active) sink.destroy();
  });

  /** Who may export: the visibility to apply, or the reply already sent (401/403, with CORS headers). */
  function authorize(request: FastifyRequest, reply: FastifyReply, cors: Record<string, string>): Visibility | undefined {
    if (request.auth.kind === 'anonymous' && options.anonymousAccess) return SEE_EVERYTHING;
    const decision = accessOf(request, 'exportData');
    if (decision.kind === 'allowed') return decision.visibility;
    sendAccessRefusal(reply, decision, { headers: cors });
    return undefined;
  }

  /** Answers a plan: a problem, a 204, or the stream itself on the hijacked raw response. */
  async function answer(request: FastifyRequest, reply: FastifyReply, plan: Plan, cors: Record<string, string>): Promise<FastifyReply> {
    switch (plan.kind) {
      case 'refusal':
        return sendRefusal(reply, plan, cors);
      case 'noContent':
        return reply.code(204).headers(cors).send();
      case 'stream': {
        if (request.raw.destroyed) {
          await plan.cancel();
          return reply;
        }
        const gzip = acceptsGzip(request.headers['accept-encoding']);
        reply.hijack();
        const res: ServerResponse = reply.raw;
        const counted = plan.count === undefined ? {} : { [BUILD_COUNT_HEADER]: String(plan.count), 'preference-applied': 'count=exact' };
        // reply.getHeaders(): what hooks set before the hijack (Deprecated/Sunset of v1) goes out too.
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          ...SSE_HEADERS,
          ...counted,
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          vary: cors['vary'] ? 'Origin, Accept-Encoding' : 'Accept-Encoding',
          ...withoutVary(cors),
        });
        // Headers now, so that a client of a quiet stream knows at once that it is connected.
        res.flushHeaders();
        const sink = new SseSink(res, { gzip, gzipLevel: options.gzipLevel });
        active.add(sink);
        try {
          await plan.run(sink);
        } catch (err) {
          request.log.error({ err, url: request.url }, 'export stream failed');
          sink.destroy();
        } finally {
          active.delete(sink);
        }
        return reply;
      }
    }
  }

  for (const version of [1, 2] as const satisfies readonly ApiVersion[]) {
    const prefix = `${EXPORT_PREFIX}/v${version}`;

    /** Common start of every route: CORS, authentication. */
    const begin = (request: FastifyRequest, reply: FastifyReply): { cors: Record<string, string>; visibility: Visibility } | undefined => {
      const cors = isBearer(request) ? corsHeaders(options, request.headers.origin) : {};
      const visibility = authorize(request, reply, cors);
      return visibility === undefined ? undefined : { cors, visibility };
    };

    const checkQuery = (query: Query): CheckedExpr | undefined | Refusal => {
      const text = query['query'];
      if (text === undefined) return undefined;
      if (typeof text !== 'string') return refuse('invalid-parameter', 'Give the query parameter once', { parameter: 'query' });
      const parsed = parseQuery(text, { now: clock() });
      if (!parsed.ok || parsed.expr === undefined) {
        return refuse('invalid-query', invalidQueryDetail(parsed.diagnostics), { parameter: 'query', ...invalidQueryExtensions(text, parsed.diagnostics) });
      }
      return parsed.expr;
    };

    const listing = (start: 'since' | 'sinceBuild') => async (request: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply) => {
      const ok = begin(request, reply);
      if (ok === undefined) return reply;
      const q = request.query ?? {};
      let startValue;
      if (start === 'since') {
        const date = parseSinceDate(request.params.date ?? '', clock());
        if (date.kind === 'refusal') return sendRefusal(reply, date, ok.cors);
        startValue = { kind: 'since', date } as const;
      } else {
        const buildId = parseBuildId(request.params.buildId ?? '');
        if (typeof buildId !== 'string') return sendRefusal(reply, buildId, ok.cors);
        startValue = { kind: 'sinceBuild', buildId } as const;
      }
      const query = checkQuery(q);
      if (query !== undefined && query.kind === 'refusal') return sendRefusal(reply, query, ok.cors);
      const plan = await planListing(ctx.store, {
        version,
        visibility: ok.visibility,
        start: startValue,
        ...(query !== undefined ? { query } : {}),
        stream: isStreaming(q),
        ...lastEventId(request),
        heartbeatMs: options.heartbeatMs,
        retryAfterSeconds: options.retryAfterSeconds,
        count: prefersCount(request.headers['prefer']),
      });
      return answer(request, reply, plan, ok.cors);
    };

    const schema = (summary: string, params: Record<string, string>, query: Record<string, string>, counts = false) => ({
      summary,
      tags: [`build export v${version}`],
      ...(version === 1 ? { deprecated: true } : {}),
      params: { type: 'object', properties: Object.fromEntries(Object.entries(params).map(([k, d]) => [k, { type: 'string', description: d }])) },
      querystring: { type: 'object', properties: Object.fromEntries(Object.entries(query).map(([k, d]) => [k, { type: 'string', description: d }])) },
      headers: {
        type: 'object',
        properties: {
          'last-event-id': { type: 'string', description: 'Resume after this message id' },
          ...(counts ? { prefer: { type: 'string', description: 'count=exact: answer with Buildscope-Build-Count, the number of builds available to send now' } } : {}),
        },
      },
    });
    // v1 is deprecated since Buildscope serves v2 (from its first release): the Deprecated header
    // says when, as an RFC 9745 date (`@<epoch seconds>`).
    const deprecation = version === 1 ? { deprecatedAt: V1_DEPRECATED_AT } : {};
    const STREAM = 'Present (any value): stay open and push new builds';
    const QUERY = 'Advanced search query filtering the builds';

    app.get<{ Params: Params; Querystring: Query }>(
      `${prefix}/builds/since/:date`,
      { exposeHeadRoute: false, config: deprecation, schema: schema('Builds that became available since a time, as Build messages', { date: '0, Unix epoch ms, or now' }, { stream: STREAM, query: QUERY }, true) },
      listing('since'),
    );
    app.get<{ Params: Params; Querystring: Query }>(
      `${prefix}/builds/sinceBuild/:buildId`,
      { exposeHeadRoute: false, config: deprecation, schema: schema('Builds that became available after a build, as Build messages', { buildId: '13-character build ID' }, { stream: STREAM, query: QUERY }, true) },
      listing('sinceBuild'),
    );
    app.get<{ Params: Params; Querystring: Query }>(
      `${prefix}/build/:buildId/events`,
      {
        // No automatic HEAD: a HEAD of an open-ended stream would never finish.
        exposeHeadRoute: false,
        config: deprecation,
        schema: schema(
          'One Build message, then the events of the build as BuildEvent messages',
          { buildId: '13-character build ID' },
          { eventTypes: 'Comma-separated, case-sensitive event types to send (default: all)' },
        ),
      },
      async (request, reply) => {
        const ok = begin(request, reply);
        if (ok === undefined) return reply;
        const buildId = parseBuildId(request.params.buildId ?? '');
        if (typeof buildId !== 'string') return sendRefusal(reply, buildId, ok.cors);
        const eventTypes = parseEventTypes((request.query ?? {})['eventTypes']);
        if (eventTypes !== undefined && !Array.isArray(eventTypes)) return sendRefusal(reply, eventTypes as Refusal, ok.cors);
        const plan = await planEvents(ctx.store, {
          version,
          visibility: ok.visibility,
          buildId,
          ...(eventTypes !== undefined ? { eventTypes: eventTypes as readonly string[] } : {}),
          ...lastEventId(request),
          retryAfterSeconds: options.retryAfterSeconds,
        });
        return answer(request, reply, plan, ok.cors);
      },
    );

    // CORS preflight: browsers send it without credentials, so it is answered for any allowed origin.
    app.options(`${prefix}/*`, { schema: { hide: true } }, async (request, reply) => {
      const cors = corsHeaders(options, request.headers.origin);
      return reply
        .code(204)
        .headers(cors)
        .header('access-control-allow-methods', 'GET, OPTIONS')
        .header('access-control-allow-headers', CORS_ALLOW_HEADERS)
        .header('access-control-max-age', '600')
        .send();
    });
  }
};

function lastEventId(request: FastifyRequest): { lastEventId?: string } {
  const h = request.headers['last-event-id'];
  const value = Array.isArray(h) ? h[0] : h;
  return value === undefined ? {} : { lastEventId: value };
}

function withoutVary(headers: Record<string, string>): Record<string, string> {
  const { vary: _vary, ...rest } = headers;
  return rest;
}
