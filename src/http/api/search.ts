// The calls behind the web pages (and the playground's counts and chart): a page of the builds
// list, the exact count, facets, trends, one build's details and its raw events. Each route
// checks its input and calls one library function (src/services/web.ts, the store); the caller's
// projects apply in SQL. Listing, count, facets and trends are searches of the store: with the
// search time limit (503 problem document) and, on SQLite, off the server's thread.

import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { visibilityOf } from '../../auth/types.js';
import { parseQuery } from '../../query/index.js';
import type { CheckedExpr } from '../../query/checked.js';
import { buildDetails, eventsPage, listPage, MAX_PAGE_SIZE } from '../../services/web.js';
import { LIST_PAGE_SCHEMA } from '../../services/list-row.js';
import { FACET_FIELDS, MAX_BUCKETS } from '../../store/analytics/analytics.js';
import { UnknownBuildError } from '../../store/build-store.js';
import { BadRequestError, NotFoundError } from '../../errors/domain.js';
import { COUNTED_TASK_OUTCOMES } from '../../store/events/tasks.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { InvalidQueryError } from '../../errors/query.js';
import { PROBLEM_RESPONSES } from './schemas.js';

export const MAX_QUERY_LENGTH = 10_000;
const DAY = 86_400_000;

const QUERY_PARAM = { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'Advanced search query; empty or absent matches every build' } as const;
// 503: a search over its time limit (limits.searchTimeoutMs).
const ERRORS = PROBLEM_RESPONSES([400, 401, 403, 503]);

/** The checked query of a request (empty or absent: every build); InvalidQueryError when it has diagnostics. */
export function checkedQuery(request: FastifyRequest, now: number): CheckedExpr {
  const raw = (request.query as { query?: unknown }).query;
  if (Array.isArray(raw)) throw new BadRequestError('Give the query parameter once');
  const text = typeof raw === 'string' ? raw : '';
  const parsed = parseQuery(text, { now });
  if (!parsed.ok || parsed.expr === undefined) throw new InvalidQueryError(text, parsed.diagnostics);
  return parsed.expr;
}

/** An instant given as epoch ms or ISO 8601 (a date alone is midnight in `tz`). */
export function parseInstant(value: string, tz: string): number | undefined {
  if (/^\d{1,16}$/.test(value)) return Number(value);
  const t = DateTime.fromISO(value, { zone: tz, setZone: false });
  return t.isValid ? t.toMillis() : undefined;
}

const FACET_SCHEMA = { type: 'array', items: { type: 'object', properties: { value: { type: 'string' }, count: { type: 'integer' } }, required: ['value', 'count'] } } as const;
const TASK_STAT_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string' }, runs: { type: 'integer' }, failures: { type: 'integer' }, meanDuration: { type: 'number' }, maxDuration: { type: 'number' } },
  required: ['path', 'runs', 'failures', 'meanDuration', 'maxDuration'],
} as const;
const NULLABLE_NUMBER = { type: ['number', 'null'] } as const;
const TRENDS_SCHEMA = {
  type: 'object',
  properties: {
    from: { type: 'integer', description: 'Start of the first period (epoch ms)' },
    to: { type: 'integer', description: 'End of the last period (epoch ms)' },
    interval: { type: 'string', enum: ['day', 'week'] },
    tz: { type: 'string' },
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          start: { type: 'integer' },
          end: { type: 'integer' },
          label: { type: 'string', description: 'First day of the period in the time zone, YYYY-MM-DD' },
          builds: { type: 'integer' },
          succeeded: { type: 'integer' },
          failed: { type: 'integer' },
          unknown: { type: 'integer' },
          failureRate: { ...NULLABLE_NUMBER, description: 'failed / (succeeded + failed)' },
          duration: {
            type: ['object', 'null'],
            description: 'Nearest-rank percentiles of the known build durations (ms)',
            properties: { p25: { type: 'number' }, p50: { type: 'number' }, p75: { type: 'number' }, p95: { type: 'number' } },
          },
          tasks: { type: 'object', description: 'Finished tasks by outcome; skipped counts the no-source tasks too', properties: Object.fromEntries(COUNTED_TASK_OUTCOMES.map((o) => [o, { type: 'integer' }])) },
          avoidedShare: { ...NULLABLE_NUMBER, description: '(up-to-date + from-cache) / all finished tasks' },
        },
        required: ['start', 'end', 'label', 'builds', 'succeeded', 'failed', 'unknown', 'failureRate', 'duration', 'tasks', 'avoidedShare'],
      },
    },
    slowestTasks: { type: 'array', items: TASK_STAT_SCHEMA },
    failingTasks: { type: 'array', items: TASK_STAT_SCHEMA },
  },
  required: ['from', 'to', 'interval', 'tz', 'buckets', 'slowestTasks', 'failingTasks'],
} as const;

export const searchRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const { store } = ctx;
  const clock = ctx.clock ?? Date.now;
  const guard = requirePermission('accessBuildDataViaApi');

  app.get<{ Querystring: { query?: string; after?: string; limit?: number } }>(
    '/api/search/builds',
    {
      preHandler: guard,
      schema: {
        summary: 'A page of matching builds for the builds list',
        description: `Builds the query matches, newest first, ${MAX_PAGE_SIZE} at most per page. Keyset pagination: pass the answer's next as after for the following page.`,
        tags: ['web'],
        operationId: 'searchBuildsPage',
        querystring: {
          type: 'object',
          properties: {
            query: QUERY_PARAM,
            after: { type: 'string', minLength: 1, maxLength: 200, description: 'ID of the last build of the previous page' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 50 },
          },
        },
        response: { 200: LIST_PAGE_SCHEMA, ...ERRORS },
      },
    },
    async (request) => {
      const query = checkedQuery(request, clock());
      try {
        return await listPage(store, { query, visibility: visibilityOf(principalOf(request)), limit: request.query.limit ?? 50, ...(request.query.after ? { after: request.query.after } : {}) });
      } catch (e) {
        if (e instanceof UnknownBuildError) throw new BadRequestError(`after: ${e.message}`);
        throw e;
      }
    },
  );

  app.get(
    '/api/search/count',
    {
      preHandler: guard,
      schema: {
        summary: 'Count matching builds',
        description: 'The exact number of builds the query matches among those the caller may see, counted in the database.',
        tags: ['web'],
        operationId: 'countBuilds',
        querystring: { type: 'object', properties: { query: QUERY_PARAM } },
        response: { 200: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] }, ...ERRORS },
      },
    },
    async (request) => {
      const query = checkedQuery(request, clock());
      // The store's count: a search like any other (off the server's thread on SQLite, time-limited).
      return { count: await store.countBuilds({ query, visibility: visibilityOf(principalOf(request)) }) };
    },
  );

  app.get<{ Querystring: { query?: string; limit?: number } }>(
    '/api/search/facets',
    {
      preHandler: guard,
      schema: {
        summary: 'Facets of matching builds',
        description: `The most frequent values, with their counts, of ${FACET_FIELDS.join(', ')} among the builds the query matches.`,
        tags: ['web'],
        operationId: 'buildFacets',
        querystring: { type: 'object', properties: { query: QUERY_PARAM, limit: { type: 'integer', minimum: 1, maximum: 50, default: 8 } } },
        response: { 200: { type: 'object', properties: Object.fromEntries(FACET_FIELDS.map((f) => [f, FACET_SCHEMA])), required: [...FACET_FIELDS] }, ...ERRORS },
      },
    },
    async (request) => {
      const query = checkedQuery(request, clock());
      return store.facets({ query, visibility: visibilityOf(principalOf(request)) }, request.query.limit ?? 8);
    },
  );

  app.get<{ Querystring: { query?: string; from?: string; to?: string; interval?: 'day' | 'week'; tz?: string } }>(
    '/api/trends',
    {
      preHandler: guard,
      schema: {
        summary: 'Trends of matching builds',
        description:
          'For the builds the query matches, per day or week (by start time, in the time zone tz): builds by outcome, nearest-rank duration percentiles, failure rate, finished tasks by outcome and the share avoided (up-to-date, from-cache); and over the whole range the ten slowest and the ten most often failing tasks. ' +
          `Computed in the database. At most ${MAX_BUCKETS} periods.`,
        tags: ['web'],
        operationId: 'buildTrends',
        querystring: {
          type: 'object',
          properties: {
            query: QUERY_PARAM,
            from: { type: 'string', maxLength: 40, description: 'Epoch ms or ISO 8601; default 30 days before to' },
            to: { type: 'string', maxLength: 40, description: 'Epoch ms or ISO 8601; default now' },
            interval: { type: 'string', enum: ['day', 'week'], default: 'day' },
            tz: { type: 'string', maxLength: 64, default: 'UTC', description: 'IANA time zone in which days and weeks (from Monday) begin' },
          },
        },
        response: { 200: TRENDS_SCHEMA, ...ERRORS },
      },
    },
    async (request) => {
      const now = clock();
      const query = checkedQuery(request, now);
      const q = request.query;
      const tz = q.tz ?? 'UTC';
      const to = q.to === undefined ? now : parseInstant(q.to, tz);
      if (to === undefined) throw new BadRequestError(`to: '${q.to}' is neither epoch milliseconds nor an ISO 8601 instant`);
      const from = q.from === undefined ? to - 30 * DAY : parseInstant(q.from, tz);
      if (from === undefined) throw new BadRequestError(`from: '${q.from}' is neither epoch milliseconds nor an ISO 8601 instant`);
      // A range or time zone it cannot use: TrendRangeError, answered 400 by the error handler.
      return store.trends({ query, visibility: visibilityOf(principalOf(request)) }, { from, to, interval: q.interval ?? 'day', tz });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/builds/:id/details',
    {
      preHandler: guard,
      schema: {
        summary: 'A build as its page shows it',
        description: 'Header, requested tasks, failures, every finished task (for the timeline), environment, build options, cache settings, tags and custom values, the attestations made from the build, and the number of events of each type.',
        tags: ['web'],
        operationId: 'getBuildDetails',
        params: { type: 'object', properties: { id: { type: 'string', maxLength: 200 } }, required: ['id'] },
        response: {
          200: {
            type: 'object',
            additionalProperties: true,
            description:
              'The list row fields (id, outcome, tool, toolVersion, project, requested, user, host, start, duration, tags) and agentVersion, availableAt, excluded, failures [{classification, message}], tasks [{path, outcome, start, duration, cacheable}] (start in ms after the build started), environment, options, cache, serverSettings, configurationCache, values [{name, value}], eventTypes {type: count}, attributes, attestations [{attestationUri, packageUrl, digest, predicateType, store, publishedAt}] (made from the build by the provenance service), tests {counts, failed [the first failed tests, as GET /api/builds/{id}/tests answers them, with testId and verdict]}, console',
          },
          ...PROBLEM_RESPONSES([401, 403, 404]),
        },
      },
    },
    async (request) => {
      const details = await buildDetails(store, request.params.id, visibilityOf(principalOf(request)));
      if (details === undefined) throw new NotFoundError(`No available build ${JSON.stringify(request.params.id)} is visible to you`);
      return details;
    },
  );

  app.get<{ Params: { id: string }; Querystring: { type?: string[]; offset?: number; limit?: number } }>(
    '/api/builds/:id/events',
    {
      preHandler: guard,
      schema: {
        summary: "A page of a build's raw events",
        description: 'The events in order, optionally only those of the given types (repeat type or separate with commas).',
        tags: ['web'],
        operationId: 'getBuildEventsPage',
        params: { type: 'object', properties: { id: { type: 'string', maxLength: 200 } }, required: ['id'] },
        querystring: {
          type: 'object',
          properties: {
            type: { type: 'array', items: { type: 'string', maxLength: 200 }, maxItems: 50 },
            offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              events: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'A build event: timestamp, type {majorVersion, minorVersion, eventType}, data' } },
              offset: { type: 'integer' },
              total: { type: 'integer', description: 'Events of the requested types in the build' },
            },
            required: ['events', 'offset', 'total'],
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 404]),
        },
      },
    },
    async (request) => {
      const visibility = visibilityOf(principalOf(request));
      if ((await store.buildState(request.params.id, visibility)) !== 'available') {
        throw new NotFoundError(`No available build ${JSON.stringify(request.params.id)} is visible to you`);
      }
      const types = (request.query.type ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
      return eventsPage(store, request.params.id, { types, offset: request.query.offset ?? 0, limit: request.query.limit ?? 100 });
    },
  );

};
