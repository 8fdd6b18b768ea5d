// Tests over time (docs/tests.md): the tests of the builds a query matches, one test's history, the
// failure groups of the builds a query matches, and one failure group with its tests and builds.
// Each route authorizes like the build listing and calls one service function; visibility is the
// caller's, so a test of a project she may not see does not exist for her (404).

import type { FastifyPluginAsync } from 'fastify';
import { visibilityOf } from '../../auth/types.js';
import { failureGroupDetail, failureGroupsOf, testHistory, testsOverview, GROUP_CURSOR_PATTERN, MAX_GROUP_BUILDS, MAX_GROUP_DAYS, MAX_GROUP_TESTS, MAX_GROUPS, MAX_HISTORY } from '../../services/tests.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { PROBLEM_RESPONSES } from './schemas.js';
import { checkedQuery, MAX_QUERY_LENGTH } from './search.js';

const ESTIMATE = {
  type: 'object',
  description: 'Failure probability per attempt (failed / passed+failed attempts) with its 95% Wilson score interval',
  properties: { failures: { type: 'integer' }, trials: { type: 'integer' }, p: { type: 'number' }, low: { type: 'number' }, high: { type: 'number' } },
  required: ['failures', 'trials', 'p', 'low', 'high'],
} as const;
const VERDICT_KINDS = ['flaky', 'broken', 'regressed', 'passing', 'no-runs'] as const;
const IDENTITY = {
  testId: { type: 'integer' },
  tool: { type: 'string' },
  project: { type: ['string', 'null'] },
  suite: { type: 'string' },
  name: { type: 'string' },
  parameters: { type: 'string' },
} as const;
const SUMMARY = {
  type: 'object',
  properties: {
    ...IDENTITY,
    runs: { type: 'integer', description: 'Attempts that passed or failed' },
    failures: { type: 'integer' },
    skipped: { type: 'integer' },
    builds: { type: 'integer' },
    meanDurationMs: { type: 'number' },
    lastSeq: { type: 'integer' },
    verdict: { type: 'string', enum: VERDICT_KINDS },
    estimate: ESTIMATE,
  },
  required: ['testId', 'tool', 'project', 'suite', 'name', 'parameters', 'runs', 'failures', 'skipped', 'builds', 'meanDurationMs', 'lastSeq', 'verdict', 'estimate'],
} as const;
const GROUP = {
  type: 'object',
  properties: {
    groupId: { type: 'integer' },
    key: { type: 'string', description: 'The failure type and message with numbers, paths, hashes, timestamps and addresses replaced' },
    sample: { type: 'string' },
    builds: { type: 'integer' },
    tests: { type: 'integer' },
    failures: { type: 'integer' },
    firstSeen: { type: ['number', 'null'] },
    lastSeen: { type: ['number', 'null'] },
    lastBuildId: { type: 'string', description: 'The latest build with a failure of the group' },
  },
  required: ['groupId', 'key', 'sample', 'builds', 'tests', 'failures', 'firstSeen', 'lastSeen', 'lastBuildId'],
} as const;
const BUILD_REF = { type: 'object', properties: { seq: { type: 'integer' }, buildId: { type: 'string' }, startTime: { type: ['number', 'null'] }, commit: { type: ['string', 'null'] } } } as const;
const VERDICT = {
  type: 'object',
  description: 'kind, and its evidence: flaky (evidence: retried, same-commit or intermittent builds), broken (since, lastPassed, failedRuns), regressed (since, lastPassed)',
  properties: {
    kind: { type: 'string', enum: VERDICT_KINDS },
    since: BUILD_REF,
    lastPassed: { anyOf: [BUILD_REF, { type: 'null' }] },
    failedRuns: { type: 'integer' },
    evidence: {
      type: 'array',
      items: {
        type: 'object',
        properties: { kind: { type: 'string', enum: ['retried', 'same-commit', 'intermittent'] }, build: BUILD_REF, commit: { type: 'string' }, failed: BUILD_REF, passed: BUILD_REF, failedBuilds: { type: 'array', items: BUILD_REF } },
        required: ['kind'],
      },
    },
  },
  required: ['kind'],
} as const;
const RUN = {
  type: 'object',
  properties: {
    seq: { type: 'integer' },
    buildId: { type: 'string' },
    startTime: { type: ['number', 'null'] },
    commit: { type: ['string', 'null'] },
    outcome: { type: 'string', enum: ['passed', 'failed', 'skipped'] },
    attempt: { type: 'integer' },
    durationMs: { type: 'number' },
    failureGroup: { type: ['integer', 'null'] },
  },
  required: ['seq', 'buildId', 'startTime', 'commit', 'outcome', 'attempt', 'durationMs', 'failureGroup'],
} as const;

const GROUP_TEST = {
  type: 'object',
  properties: { ...IDENTITY, failures: { type: 'integer', description: "The test's failed attempts of the group" }, builds: { type: 'integer' }, lastSeen: { type: ['number', 'null'] } },
  required: ['testId', 'tool', 'project', 'suite', 'name', 'parameters', 'failures', 'builds', 'lastSeen'],
} as const;
const GROUP_BUILD = {
  type: 'object',
  properties: {
    seq: { type: 'integer', description: 'Availability order' },
    buildId: { type: 'string' },
    startTime: { type: ['number', 'null'] },
    outcome: { type: ['string', 'null'] },
    project: { type: ['string', 'null'] },
    tool: { type: 'string' },
    failures: { type: 'integer', description: "The build's failures of the group: failed test attempts and build failures" },
    tests: { type: 'integer', description: 'Tests of the build with a failure of the group' },
  },
  required: ['seq', 'buildId', 'startTime', 'outcome', 'project', 'tool', 'failures', 'tests'],
} as const;

const ERRORS = PROBLEM_RESPONSES([400, 401, 403, 503]);

export const testRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const { store } = ctx;
  const clock = ctx.clock ?? Date.now;
  const guard = requirePermission('accessBuildDataViaApi');

  app.get<{ Querystring: { query?: string; limit?: number } }>(
    '/api/tests',
    {
      preHandler: guard,
      schema: {
        summary: 'Tests of the builds a query matches',
        description:
          'For the builds the query matches among those the caller may see: the tests that fail most, the flakiest, the slowest and the newly failing (regressed or broken), each with its runs, failures, verdict and estimated failure probability (95% Wilson score interval), and the failure groups.',
        tags: ['tests'],
        operationId: 'listTests',
        querystring: {
          type: 'object',
          properties: {
            query: { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'Advanced search query; empty or absent matches every build' },
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Tests per list' },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              tests: { type: 'integer', description: 'Tests counted (at most 500, those with most failures)' },
              mostFailing: { type: 'array', items: SUMMARY },
              flakiest: { type: 'array', items: SUMMARY },
              slowest: { type: 'array', items: SUMMARY },
              newlyFailing: { type: 'array', items: SUMMARY },
              failureGroups: { type: 'array', items: GROUP },
            },
            required: ['tests', 'mostFailing', 'flakiest', 'slowest', 'newlyFailing', 'failureGroups'],
          },
          ...ERRORS,
        },
      },
    },
    async (request) => testsOverview(store, { query: checkedQuery(request, clock()), visibility: visibilityOf(principalOf(request)) }, request.query.limit ?? 20),
  );

  app.get<{ Querystring: { query?: string; limit?: number } }>(
    '/api/failure-groups',
    {
      preHandler: guard,
      schema: {
        summary: 'Failure groups of the builds a query matches',
        description:
          'For the builds the query matches among those the caller may see: the groups of their failures (failed test attempts and build failures whose type and message are alike but for numbers, paths, hashes, timestamps and addresses), most builds first, each with the builds, tests and failures it holds, when it was first and last seen and its latest build.',
        tags: ['tests'],
        operationId: 'listFailureGroups',
        querystring: {
          type: 'object',
          properties: {
            query: { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'Advanced search query; empty or absent matches every build' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_GROUPS, default: 50 },
          },
        },
        response: {
          200: { type: 'object', properties: { groups: { type: 'array', items: GROUP } }, required: ['groups'] },
          ...ERRORS,
        },
      },
    },
    async (request) => failureGroupsOf(store, { query: checkedQuery(request, clock()), visibility: visibilityOf(principalOf(request)) }, request.query.limit ?? 50),
  );

  app.get<{ Params: { groupId: number }; Querystring: { query?: string; limit?: number; before?: string } }>(
    '/api/failure-groups/:groupId',
    {
      preHandler: guard,
      schema: {
        summary: 'A failure group',
        description: `One failure group in the builds the query matches among those the caller may see: its pattern (the type and message with numbers, paths, hashes, timestamps and addresses replaced) and an example message, the builds, tests and failures it holds and how many are build failures, first and last seen, the tests it hit (at most ${MAX_GROUP_TESTS}, most builds first), its builds per UTC day (the latest ${MAX_GROUP_DAYS} days with any) and a page of its builds, the latest start first. 404 when no build the caller may see has a failure of the group.`,
        tags: ['tests'],
        operationId: 'getFailureGroup',
        params: { type: 'object', properties: { groupId: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "The group's id, as GET /api/failure-groups answers it" } }, required: ['groupId'] },
        querystring: {
          type: 'object',
          properties: {
            query: { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'Advanced search query; empty or absent matches every build' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_GROUP_BUILDS, default: 50, description: 'Builds a page' },
            before: { type: 'string', pattern: GROUP_CURSOR_PATTERN, description: 'The next page: the `next` of the previous one' },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              group: GROUP,
              buildFailures: { type: 'integer', description: "Of the group's failures, those that are builds' own failures (not tests)" },
              tests: { type: 'array', items: GROUP_TEST },
              days: { type: 'array', description: 'Builds per UTC day, oldest first; days without builds left out', items: { type: 'object', properties: { day: { type: 'number', description: "The day's first instant, epoch ms" }, builds: { type: 'integer' } }, required: ['day', 'builds'] } },
              builds: { type: 'array', items: GROUP_BUILD },
              next: { type: ['string', 'null'], description: 'The `before` of the next page (`<start>:<seq>`), or null on the last page' },
            },
            required: ['group', 'buildFailures', 'tests', 'days', 'builds', 'next'],
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 404, 503]),
        },
      },
    },
    async (request) => {
      const { limit, before } = request.query;
      const scope = { query: checkedQuery(request, clock()), visibility: visibilityOf(principalOf(request)) };
      return failureGroupDetail(store, scope, request.params.groupId, { ...(limit !== undefined ? { limit } : {}), ...(before !== undefined ? { before } : {}) });
    },
  );

  app.get<{ Params: { testId: number }; Querystring: { limit?: number } }>(
    '/api/tests/:testId/history',
    {
      preHandler: guard,
      schema: {
        summary: "A test's history",
        description: `The test's latest executions (at most ${MAX_HISTORY}) in the builds the caller may see, oldest first, its verdict with evidence, its estimated failure probability and its failure groups. 404 for a test of a project the caller may not see.`,
        tags: ['tests'],
        operationId: 'testHistory',
        params: { type: 'object', properties: { testId: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "The test's id, as GET /api/tests answers it" } }, required: ['testId'] },
        querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: MAX_HISTORY, default: MAX_HISTORY } } },
        response: {
          200: {
            type: 'object',
            properties: { test: { type: 'object', properties: IDENTITY, required: Object.keys(IDENTITY) }, runs: { type: 'array', items: RUN }, verdict: VERDICT, estimate: ESTIMATE, failureGroups: { type: 'array', items: GROUP } },
            required: ['test', 'runs', 'verdict', 'estimate', 'failureGroups'],
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 404, 503]),
        },
      },
    },
    async (request) => testHistory(store, visibilityOf(principalOf(request)), request.params.testId, request.query.limit ?? MAX_HISTORY),
  );
};
