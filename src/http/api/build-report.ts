// GET /api/builds/{id}/tests and GET /api/builds/{id}/console: the pages of a build's tests and
// console log behind the build page (src/services/build-report.ts), so that a build of 10,000
// tests or a 10 MB log is read a page at a time, never whole into the page.

import type { FastifyPluginAsync } from 'fastify';
import { visibilityOf } from '../../auth/types.js';
import { NotFoundError } from '../../errors/domain.js';
import { buildReport, consolePage, MAX_CONSOLE_PAGE, MAX_TESTS_PAGE, TEST_FILTERS, testsPage, type TestFilter } from '../../services/build-report.js';
import { testsPageWithIds } from '../../services/build-tests.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { PROBLEM_RESPONSES } from './schemas.js';

const ID_PARAMS = { type: 'object', properties: { id: { type: 'string', maxLength: 200 } }, required: ['id'] } as const;
const PAGE = (max: number, dflt: number) =>
  ({
    offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    limit: { type: 'integer', minimum: 1, maximum: max, default: dflt },
  }) as const;

export const buildReportRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const { store } = ctx;
  const guard = requirePermission('accessBuildDataViaApi');

  /** The report of a build the caller may see; 404 otherwise. */
  const visibleBuild = async (id: string, request: Parameters<typeof principalOf>[0]) => {
    const build = await store.getBuild(id, visibilityOf(principalOf(request)));
    if (build === undefined) throw new NotFoundError(`No available build ${JSON.stringify(id)} is visible to you`);
    return build;
  };
  const reportOfBuild = (build: Awaited<ReturnType<typeof visibleBuild>>) => {
    const start = build.attributes['buildStartTime'];
    return buildReport(store, build, typeof start === 'number' ? start : null);
  };
  const reportFor = async (id: string, request: Parameters<typeof principalOf>[0]) => reportOfBuild(await visibleBuild(id, request));

  app.get<{ Params: { id: string }; Querystring: { name?: string; filter?: TestFilter; offset?: number; limit?: number } }>(
    '/api/builds/:id/tests',
    {
      preHandler: guard,
      schema: {
        summary: "A page of a build's tests",
        description:
          'The tests of the build (attempts of one test together), failed first, then flaky (failed, then passed when retried), then by duration, longest first; optionally only those whose suite.name or display name holds `name` (any case) and of one outcome.',
        tags: ['web'],
        operationId: 'getBuildTestsPage',
        params: ID_PARAMS,
        querystring: {
          type: 'object',
          properties: {
            name: { type: 'string', maxLength: 1000 },
            filter: { type: 'string', enum: [...TEST_FILTERS], default: 'all' },
            ...PAGE(MAX_TESTS_PAGE, 100),
          },
        },
        response: {
          200: {
            type: 'object',
            additionalProperties: true,
            description:
              'tests [{key, suite, name, displayName, parameters, task, outcome, attempts, flaky, start, duration, skipReason, failure {type, message, stackTrace}, output, unreadOutputs [{name, reason}] (files of the last attempt the server could not read, e.g. a Bazel test log in another cache: otherCache, clientFile, notFound, denied, timeout, tooLarge, limit, failed, unsupported), testId (GET /api/tests/{testId}/history; null when unknown), verdict (the test\'s verdict over its latest runs: flaky, broken, regressed, passing, no-runs; null without testId)}], offset, total (matching tests), counts {total, passed, failed, skipped, flaky}',
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 404]),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const build = await visibleBuild(request.params.id, request);
      const page = testsPage(await reportOfBuild(build), { ...(q.name !== undefined ? { name: q.name } : {}), filter: q.filter ?? 'all', offset: q.offset ?? 0, limit: q.limit ?? 100 });
      return testsPageWithIds(store, build, visibilityOf(principalOf(request)), page);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { search?: string; offset?: number; limit?: number } }>(
    '/api/builds/:id/console',
    {
      preHandler: guard,
      schema: {
        summary: "A page of a build's console log",
        description: 'Lines of the console output the build sent (ConsoleOutput), with their ANSI colour codes; with `search`, the numbers of the lines that hold it (any case, colours left out).',
        tags: ['web'],
        operationId: 'getBuildConsolePage',
        params: ID_PARAMS,
        querystring: { type: 'object', properties: { search: { type: 'string', maxLength: 1000 }, ...PAGE(MAX_CONSOLE_PAGE, 500) } },
        response: {
          200: {
            type: 'object',
            additionalProperties: true,
            description: 'lines (strings), offset, total (lines of the log), truncated (the log was cut), firstError {line, text} | null, and with search: matches {lines (0-based, at most 1000), count}',
          },
          ...PROBLEM_RESPONSES([400, 401, 403, 404]),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return consolePage(await reportFor(request.params.id, request), { offset: q.offset ?? 0, limit: q.limit ?? 500, ...(q.search !== undefined ? { search: q.search } : {}) });
    },
  );
};
