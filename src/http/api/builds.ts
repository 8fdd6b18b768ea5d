// GET /api/builds, GET /api/builds/{id}, POST /api/builds. Each handler checks its input and calls
// one store method; the store applies the caller's visibility in SQL.

import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { visibilityOf } from '../../auth/types.js';
import { parseQuery } from '../../query/index.js';
import type { CheckedExpr } from '../../query/checked.js';
import { InvalidQueryError } from '../../errors/query.js';
import type { BuildSummary, BuildWithAttributes, ListBuildsOptions } from '../../store/types.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { PROBLEM_RESPONSES } from './schemas.js';
import { countingLines } from './ingest-body.js';
import { BadRequestError, InsufficientStorageError, InvalidParameterError, NotFoundError } from '../../errors/domain.js';
import { BuildDeletedError, BuildNotReadyError } from '../../errors/build.js';
import { UnknownBuildError } from '../../store/build-store.js';
import { INGEST_LINE_SCHEMA } from '../../store/ingest/validate.js';
import { parseExportOptions } from '../../export/options.js';

const MODELS = ['attributes'] as const;

const SUMMARY_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'Build ID' },
    availableAt: { type: 'integer', description: 'Epoch milliseconds at which the build became available' },
    buildToolType: { type: 'string', description: 'native, jvmbuild, targetbuild, scalabuild, jsbuild or pybuild' },
    buildToolVersion: { type: 'string' },
    buildAgentVersion: { type: 'string' },
    attributes: {
      type: 'object',
      additionalProperties: true,
      description: 'With models=attributes: the derived attributes by catalog field name (key-value fields as [{name, value}], multi-valued fields as arrays)',
    },
  },
  required: ['id', 'availableAt', 'buildToolType', 'buildToolVersion', 'buildAgentVersion'],
} as const;

const MODELS_PARAM = {
  type: 'array',
  items: { type: 'string', maxLength: 200 },
  maxItems: 10,
  description: 'Extra models to include, comma-separated or repeated: attributes',
} as const;

interface ListQuery {
  since?: number;
  fromInstant?: number;
  fromBuild?: string;
  sinceBuild?: string;
  maxBuilds?: number;
  reverse?: boolean;
  maxWaitSecs?: number;
  query?: string;
  models?: string[];
}

function toSummary(b: BuildSummary | BuildWithAttributes, withAttributes: boolean): Record<string, unknown> {
  const s: Record<string, unknown> = {
    id: b.id,
    availableAt: b.availableAt,
    buildToolType: b.toolType,
    buildToolVersion: b.toolVersion,
    buildAgentVersion: b.agentVersion,
  };
  if (withAttributes) s['attributes'] = (b as BuildWithAttributes).attributes ?? {};
  return s;
}

/** `models` values, or a problem detail naming the unknown ones. */
function parseModels(models: readonly string[] | undefined): { withAttributes: boolean } | { error: string } {
  const values = (models ?? []).flatMap((m) => m.split(',')).map((m) => m.trim()).filter((m) => m !== '');
  const unknown = values.filter((m) => !(MODELS as readonly string[]).includes(m));
  if (unknown.length > 0) return { error: `Unknown model ${unknown.map((m) => `'${m}'`).join(', ')}; known models: ${MODELS.join(', ')}` };
  return { withAttributes: values.includes('attributes') };
}

function storeError(e: unknown): never {
  if (e instanceof UnknownBuildError) throw new InvalidParameterError(`fromBuild: ${e.message}`);
  throw e;
}

type ListingStart =
  | { readonly kind: 'build'; readonly id: string; readonly reverse: boolean }
  /** `at` is inclusive in the store's terms (already moved one millisecond past the exclusive instant). */
  | { readonly kind: 'instant'; readonly at: number; readonly reverse: boolean }
  | { readonly kind: 'now' }
  | { readonly kind: 'empty' };

/**
 * Where a listing starts, as the public REST API defines it: fromBuild (alias sinceBuild) wins,
 * then fromInstant, then since (the deprecated alias, with which reverse has no effect); both
 * instants are exclusive. Without any, the listing starts at the time of the request, so a polling
 * client does not download the whole history first.
 */
function listingStart(q: ListQuery, fromBuild: string | undefined): ListingStart {
  if (fromBuild !== undefined) return { kind: 'build', id: fromBuild, reverse: q.reverse === true };
  const reverse = q.fromInstant !== undefined && q.reverse === true;
  const instant = q.fromInstant ?? q.since;
  if (instant === undefined) return { kind: 'now' };
  if (reverse) return instant === 0 ? { kind: 'empty' } : { kind: 'instant', at: instant - 1, reverse };
  // since=0 means from the beginning (seed 002): no lower bound at all.
  if (instant === 0) return { kind: 'instant', at: 0, reverse };
  return { kind: 'instant', at: Math.min(instant + 1, Number.MAX_SAFE_INTEGER), reverse };
}

/**
 * An AbortSignal that ends a long-poll's wait: the client went away before the response was sent,
 * or the server is shutting down (`closing`), which then answers what it has (an empty list) at once
 * instead of holding its shutdown for the rest of the wait.
 */
function waitEnds(reply: FastifyReply, closing: AbortSignal): AbortSignal {
  const ac = new AbortController();
  const end = () => ac.abort();
  closing.addEventListener('abort', end, { once: true });
  reply.raw.once('close', () => {
    end();
    closing.removeEventListener('abort', end);
  });
  return ac.signal;
}

export const buildRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const { store, config } = ctx;
  const clock = ctx.clock ?? Date.now;
  const limits = config.limits;
  // The Retry-After of a build still being stored is the export API's (one setting for both).
  const retryAfterSeconds = parseExportOptions(config.export).retryAfterSeconds;
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());

  app.get<{ Querystring: ListQuery }>(
    '/api/builds',
    {
      schema: {
        summary: 'List builds',
        description:
          'Builds the server has seen, oldest first (newest first with reverse=true), optionally filtered by an advanced search query. ' +
          'Starts after fromBuild (or its deprecated alias sinceBuild), else after fromInstant, else after since; without any of them, at the time of the request ' +
          '(only builds that become available later are listed; reverse=true then lists from the newest build back). ' +
          `When no build is available yet, waits up to maxWaitSecs for one. ` +
          'Requires the permission accessBuildDataViaApi; with project-level access control only builds of the caller\'s projects are listed.',
        tags: ['builds'],
        querystring: {
          type: 'object',
          properties: {
            since: {
              type: 'integer',
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              deprecated: true,
              description: 'Deprecated alias of fromInstant: epoch milliseconds; builds that became available after it (exclusive). 0 means from the beginning. reverse has no effect with since.',
            },
            fromInstant: {
              type: 'integer',
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              description: 'Epoch milliseconds; builds that became available after it (exclusive), or before it with reverse=true. Takes precedence over since.',
            },
            fromBuild: { type: 'string', minLength: 1, maxLength: 200, description: 'Build ID; builds that became available after it (exclusive), or before it with reverse=true. Takes precedence over fromInstant and since.' },
            sinceBuild: { type: 'string', minLength: 1, maxLength: 200, deprecated: true, description: 'Deprecated alias of fromBuild; fromBuild wins when both are given.' },
            maxBuilds: { type: 'integer', minimum: 0, maximum: 1000, description: `Maximum number of builds returned, 0 to ${limits.maxBuildsMax}; default ${limits.maxBuildsDefault}.` },
            reverse: { type: 'boolean', description: 'Newest first.' },
            maxWaitSecs: { type: 'integer', minimum: 1, maximum: 20, description: `Seconds to wait for a build when none is available, 1 to ${limits.maxWaitSecsMax}; default ${limits.maxWaitSecsDefault}.` },
            query: { type: 'string', maxLength: 10_000, description: 'Advanced search query, e.g. `buildOutcome:failed project:app buildStartTime>-7d`.' },
            models: MODELS_PARAM,
          },
        },
        response: {
          200: { type: 'array', items: SUMMARY_SCHEMA },
          ...PROBLEM_RESPONSES([400, 401, 403, 503]),
        },
      },
      preHandler: requirePermission('accessBuildDataViaApi'),
    },
    async (request, reply) => {
      const q = request.query;
      const principal = principalOf(request);
      const models = parseModels(q.models);
      if ('error' in models) throw new InvalidParameterError(models.error);
      const maxBuilds = q.maxBuilds ?? limits.maxBuildsDefault;
      if (maxBuilds > limits.maxBuildsMax) throw new InvalidParameterError(`maxBuilds must be at most ${limits.maxBuildsMax}, got ${maxBuilds}`);
      const maxWaitSecs = q.maxWaitSecs ?? limits.maxWaitSecsDefault;
      if (maxWaitSecs > limits.maxWaitSecsMax) throw new InvalidParameterError(`maxWaitSecs must be at most ${limits.maxWaitSecsMax}, got ${maxWaitSecs}`);
      let expr: CheckedExpr | undefined;
      if (q.query !== undefined && q.query.trim() !== '') {
        const parsed = parseQuery(q.query, { now: clock() });
        if (!parsed.ok || parsed.expr === undefined) {
          throw new InvalidQueryError(q.query, parsed.diagnostics);
        }
        expr = parsed.expr;
      }
      const fromBuild = q.fromBuild ?? q.sinceBuild;
      if (fromBuild !== undefined && fromBuild.includes('\0')) throw new InvalidParameterError(`${q.fromBuild !== undefined ? 'fromBuild' : 'sinceBuild'}: a build ID has no NUL character`);
      const start = listingStart(q, fromBuild);
      if (start.kind === 'empty') return [];
      const reverse = start.kind !== 'now' ? start.reverse : q.reverse === true;
      const options: ListBuildsOptions = {
        ...(start.kind === 'build' ? { fromBuild: start.id } : {}),
        ...(start.kind === 'instant' ? { fromInstant: start.at } : {}),
        ...(start.kind === 'now' && !reverse ? { afterSeq: await store.latestSeq() } : {}),
        ...(reverse ? { reverse: true } : {}),
        ...(expr !== undefined ? { query: expr } : {}),
        maxBuilds,
        visibility: visibilityOf(principal),
        withAttributes: models.withAttributes,
      };

      try {
        // Long-poll: when nothing is available (oldest-first listings only), wait for a newer
        // build (stored by any server process over the same database) and look again.
        const mayWait = maxBuilds > 0 && !reverse;
        let builds = await store.listBuilds(options);
        let seen = 0;
        if (builds.length === 0 && mayWait) {
          // Read the newest position, then look once more: a build stored between the first look
          // and now is found by this look, any later one wakes the wait below.
          seen = await store.latestSeq();
          builds = await store.listBuilds(options);
        }
        if (builds.length === 0 && mayWait) {
          const deadline = clock() + maxWaitSecs * 1000;
          const ended = waitEnds(reply, closing.signal);
          for (let left = deadline - clock(); left > 0 && !ended.aborted; left = deadline - clock()) {
            if (!(await store.waitForNewBuilds(seen, left, ended))) break;
            seen = await store.latestSeq();
            builds = await store.listBuilds(options);
            if (builds.length > 0) break;
          }
        }
        return builds.map((b) => toSummary(b, models.withAttributes));
      } catch (e) {
        return storeError(e);
      }
    },
  );

  app.get<{ Params: { id: string }; Querystring: { models?: string[] } }>(
    '/api/builds/:id',
    {
      schema: {
        summary: 'One build',
        description:
          'The summary of one available build (with models=attributes, its attributes). 404 when it does not exist or is not visible to the caller; ' +
          '503 with Retry-After while the build is still being stored; a build deleted by retention answers 404 with the problem type urn:buildscope:problem:build-deleted.',
        tags: ['builds'],
        params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] },
        querystring: { type: 'object', properties: { models: MODELS_PARAM } },
        response: { 200: SUMMARY_SCHEMA, ...PROBLEM_RESPONSES([400, 401, 403, 404, 503]) },
      },
      preHandler: requirePermission('accessBuildDataViaApi'),
    },
    async (request) => {
      const models = parseModels(request.query.models);
      if ('error' in models) throw new InvalidParameterError(models.error);
      if (request.params.id.includes('\0')) throw new InvalidParameterError('A build ID has no NUL character');
      const visibility = visibilityOf(principalOf(request));
      const build = await store.getBuild(request.params.id, visibility, { withAttributes: models.withAttributes });
      if (build === undefined) {
        // A build whose events are still arriving exists but is not available yet: like the
        // export API, say so with 503 and when to look again, rather than a 404 a client would trust.
        if ((await store.buildState(request.params.id, visibility)) === 'incomplete') throw new BuildNotReadyError(request.params.id, retryAfterSeconds);
        const deleted = await store.deletedBuild(request.params.id, visibility);
        if (deleted !== undefined) throw new BuildDeletedError(request.params.id, deleted.deletedAt);
        throw new NotFoundError(`No available build with ID ${JSON.stringify(request.params.id)}`);
      }
      return toSummary(build, models.withAttributes);
    },
  );

  await app.register(async (ingest) => {
    // NDJSON only; the body is streamed into the store line by line, never buffered whole.
    ingest.removeAllContentTypeParsers();
    ingest.addContentTypeParser(['application/x-ndjson', 'application/jsonl'], (_request, payload, done) => done(null, payload));
    ingest.post(
      '/api/builds',
      {
        schema: {
          summary: 'Publish builds',
          description:
            'Ingests builds as NDJSON (application/x-ndjson), one build per line; a line for a build that is not finished yet may be followed by later lines that append to it. ' +
            `Answers one result per non-blank line. Requires the permission publishScan. Bodies larger than ${limits.ingestBodyBytes} bytes are refused (413) after the lines before the limit. While free disk space is under retention.rejectBelowFreeDiskPercent, every request is refused with 507.`,
          tags: ['builds'],
          consumes: ['application/x-ndjson'],
          response: {
            200: {
              type: 'object',
              properties: {
                stored: { type: 'integer' },
                unchanged: { type: 'integer' },
                rejected: { type: 'integer' },
                results: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      line: { type: 'integer' },
                      status: { type: 'string', enum: ['stored', 'unchanged', 'rejected'] },
                      buildId: { type: 'string' },
                      complete: { type: 'boolean' },
                      error: { type: 'string' },
                      path: { type: 'string' },
                    },
                    required: ['line', 'status'],
                  },
                },
              },
              required: ['stored', 'unchanged', 'rejected', 'results'],
            },
            ...PROBLEM_RESPONSES([400, 401, 403, 413, 415, 507]),
          },
        },
        preHandler: requirePermission('publishScan'),
        config: {
          openapiRequestBody: {
            required: true,
            description: 'One build per line: {"buildId"?, "toolType", "toolVersion", "agentVersion", "events": [...]}; each line as x-itemSchema says (schema/ingest-line.schema.json)',
            content: { 'application/x-ndjson': { schema: { type: 'string' }, 'x-itemSchema': INGEST_LINE_SCHEMA } },
          },
        },
      },
      async (request) => {
        // Free disk space under retention.rejectBelowFreeDiskPercent: refused before reading the
        // body, so that agents keep the builds and send them again later.
        const full = ctx.refuseIngest?.();
        if (full !== undefined) throw new InsufficientStorageError(full);
        const body = request.body as NodeJS.ReadableStream | undefined;
        if (body === undefined || body === null) throw new BadRequestError('The request needs an NDJSON body (Content-Type: application/x-ndjson)');
        // The publisher's visibility: restricted publishers append only to builds they may see.
        // A body over the limit throws IngestTooLargeError (413) after the lines before it are stored.
        const visibility = visibilityOf(principalOf(request));
        const results = await store.ingestNdjson(countingLines(body, limits.ingestBodyBytes), { visibility });
        const count = (s: string) => results.filter((r) => r.status === s).length;
        return { stored: count('stored'), unchanged: count('unchanged'), rejected: count('rejected'), results };
      },
    );
  });
};
