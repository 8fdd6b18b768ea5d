// GET /api/builds/{a}/compare/{b}: two builds side by side (src/services/compare.ts). The same
// permission and project rule as GET /api/builds/{id}: a build the caller may not see is an
// unknown ID (404).

import type { FastifyPluginAsync } from 'fastify';
import { visibilityOf } from '../../auth/types.js';
import { InvalidParameterError } from '../../errors/domain.js';
import { parseExportOptions } from '../../export/options.js';
import { compareBuilds, SECTION_IDS } from '../../services/compare.js';
import { SUMMARY_REASONS } from '../../services/comparison.js';
import { MISS_CAUSES } from '../../services/task-inputs.js';
import { TEST_OUTCOMES } from '../../store/events/test-events.js';
import { TASK_OUTCOMES } from '../../store/events/tasks.js';
import type { FacePluginOptions } from '../context.js';
import { principalOf, requirePermission } from '../auth-plugin.js';
import { PROBLEM_RESPONSES } from './schemas.js';

const ID = { type: 'string', minLength: 1, maxLength: 200 } as const;
const SCALAR = { type: ['string', 'number', 'boolean', 'null'] } as const;
const NULLABLE_STRING = { type: ['string', 'null'] } as const;
const NULLABLE_NUMBER = { type: ['number', 'null'] } as const;
const TASK_OUTCOME = { type: 'string', enum: TASK_OUTCOMES } as const;
const TEST_OUTCOME = { type: ['string', 'null'], enum: [...TEST_OUTCOMES, null] } as const;

const TASK = {
  type: 'object',
  properties: { path: { type: 'string' }, occurrence: { type: 'integer', description: 'Tells apart tasks of the same path in one build (1, 2, ...)' }, outcome: TASK_OUTCOME, duration: { type: 'number' }, cacheable: { type: ['boolean', 'null'] } },
  required: ['path', 'occurrence', 'outcome', 'duration', 'cacheable'],
} as const;
const PARAMETERS = { type: 'string', description: "A parametrized test's parameters; its cases are tests of their own. Absent for a test without" } as const;
const TEST = {
  type: 'object',
  properties: { suite: { type: 'string' }, name: { type: 'string' }, parameters: PARAMETERS, outcome: TEST_OUTCOME, duration: { type: 'number', description: 'All attempts, ms' }, attempts: { type: 'integer' } },
  required: ['suite', 'name', 'outcome', 'duration', 'attempts'],
} as const;
const FAILURE = { type: 'object', properties: { classification: { type: 'string' }, message: { type: 'string' } }, required: ['classification', 'message'] } as const;

const CHANGE = { type: 'string', enum: ['changed', 'added', 'removed'] } as const;
const INPUT_CHANGE = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The input property' },
    change: CHANGE,
    files: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, change: CHANGE }, required: ['path', 'change'] }, description: 'The files that differ, where both builds listed them' },
    filesOmitted: { type: 'boolean', description: "Some files were past the agent's bound: the files named may not be all" },
    producedBy: { type: 'array', items: { type: 'string' }, description: "Tasks whose outputs hold every changed file" },
  },
  required: ['name', 'change', 'files', 'filesOmitted', 'producedBy'],
} as const;

const kind = (k: string, description: string, properties: Record<string, unknown>, optional: Record<string, unknown> = {}) => ({
  type: 'object',
  description,
  properties: { kind: { const: k }, ...properties, ...optional },
  required: ['kind', ...Object.keys(properties)],
});
const taskAt = { path: { type: 'string' }, occurrence: { type: 'integer' } };
const testAt = { suite: { type: 'string' }, name: { type: 'string' } };

const DIFFERENCE = {
  description: 'One difference; before is build a, after build b',
  oneOf: [
    kind('field', 'A single value (header, git, environment, options, cache, server settings, custom values, task and test counts)', {
      group: { type: 'string', enum: ['build', 'counts', 'git', 'environment', 'options', 'cache', 'settings', 'values'] },
      name: { type: 'string' },
      before: SCALAR,
      after: SCALAR,
    }),
    kind('list', 'Requested or excluded tasks, tags, or the configurations resolved (`project configuration`), compared as sets', {
      group: { type: 'string', enum: ['requested', 'tags', 'configurations'] },
      name: { type: 'string' },
      added: { type: 'array', items: { type: 'string' }, description: 'In b only' },
      removed: { type: 'array', items: { type: 'string' }, description: 'In a only' },
    }),
    kind('task-added', 'A task of b only', { task: TASK }),
    kind('task-removed', 'A task of a only', { task: TASK }),
    kind('task-outcome', 'Another outcome', { ...taskAt, before: TASK_OUTCOME, after: TASK_OUTCOME }),
    kind('task-duration', 'Another duration (ms); largest change first', { ...taskAt, before: { type: 'number' }, after: { type: 'number' } }),
    kind('task-inputs', "Another cache key or other recorded inputs (TaskInputs); missed: from the cache in a, executed in b, or the other way", {
      ...taskAt,
      missed: { type: 'boolean' },
      before: NULLABLE_STRING,
      after: NULLABLE_STRING,
      implementation: { type: 'boolean', description: "The task's implementation differs (another plugin or tool version)" },
      inputs: { type: 'array', items: INPUT_CHANGE },
      cause: { type: 'string', enum: MISS_CAUSES, description: 'inputs: an input no other task produced; implementation; upstream: only inputs that other tasks changed; unknown: nothing recorded explains it' },
    }),
    kind('task-cacheable', 'Cacheable in one build only', { ...taskAt, before: { type: ['boolean', 'null'] }, after: { type: ['boolean', 'null'] } }),
    kind('test-added', 'A test of b only', { test: TEST }),
    kind('test-removed', 'A test of a only', { test: TEST }),
    kind('test-outcome', 'Another outcome (of the last attempt)', { ...testAt, before: TEST_OUTCOME, after: TEST_OUTCOME }, { parameters: PARAMETERS }),
    kind('test-duration', 'Another duration (ms); largest change first', { ...testAt, before: { type: 'number' }, after: { type: 'number' } }, { parameters: PARAMETERS }),
    kind('failure-added', 'A failure of b only', { failure: FAILURE }),
    kind('failure-removed', 'A failure of a only', { failure: FAILURE }),
    kind('dependency', 'A module of a configuration both builds resolved (ResolvedDependencies), at another version or in one build only (null); a module without a version is an empty string', {
      project: { type: 'string' },
      configuration: { type: 'string', description: 'Gradle: the configuration; Maven: the scope' },
      module: { type: 'string', description: "'group:name', a Maven classifier after the name, or 'project :lib'" },
      before: NULLABLE_STRING,
      after: NULLABLE_STRING,
    }),
  ],
  discriminator: { propertyName: 'kind' },
} as const;

const SIDE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    project: NULLABLE_STRING,
    tool: { type: 'string' },
    toolVersion: { type: 'string' },
    agentVersion: { type: 'string' },
    outcome: NULLABLE_STRING,
    start: NULLABLE_NUMBER,
    duration: NULLABLE_NUMBER,
    user: NULLABLE_STRING,
    host: NULLABLE_STRING,
    ciProvider: NULLABLE_STRING,
    ciBuild: { ...NULLABLE_STRING, description: 'Link to the CI job' },
    gitBranch: NULLABLE_STRING,
    gitCommit: NULLABLE_STRING,
    tasks: { type: 'integer' },
    tests: { type: 'integer' },
  },
  required: ['id', 'project', 'tool', 'toolVersion', 'agentVersion', 'outcome', 'start', 'duration', 'user', 'host', 'ciProvider', 'ciBuild', 'gitBranch', 'gitCommit', 'tasks', 'tests'],
} as const;

const COMPARISON = {
  type: 'object',
  properties: {
    a: SIDE,
    b: SIDE,
    identical: { type: 'boolean' },
    summary: {
      type: 'array',
      description: 'The few differences most likely to explain the difference in outcome or duration (docs/server.md says how they are chosen)',
      items: {
        type: 'object',
        properties: {
          reason: { type: 'string', enum: SUMMARY_REASONS },
          difference: DIFFERENCE,
        },
        required: ['reason', 'difference'],
      },
    },
    sections: {
      type: 'array',
      description: `Every difference, in the sections ${SECTION_IDS.join(', ')}; a section without differences is identical`,
      items: {
        type: 'object',
        properties: { id: { type: 'string', enum: SECTION_IDS }, compared: { type: 'integer' }, differences: { type: 'array', items: DIFFERENCE } },
        required: ['id', 'compared', 'differences'],
      },
    },
  },
  required: ['a', 'b', 'identical', 'summary', 'sections'],
} as const;

export const compareRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx }) => {
  const { store } = ctx;
  const retryAfterSeconds = parseExportOptions(ctx.config.export).retryAfterSeconds;
  app.get<{ Params: { a: string; b: string } }>(
    '/api/builds/:a/compare/:b',
    {
      preHandler: requirePermission('accessBuildDataViaApi'),
      schema: {
        summary: 'Compare two builds',
        description:
          'What differs between build a (before) and build b (after): the header, what was asked (requested tasks, options, environment, tags, custom values, git), what happened (tasks, dependencies resolved, tests, failures), and first a summary of the differences most likely to explain the difference in outcome or duration. ' +
          'Any two builds of any tools. Either build not visible to the caller answers 404 exactly as an unknown ID; 503 with Retry-After while one is still being stored.',
        tags: ['builds'],
        operationId: 'CompareBuilds',
        params: { type: 'object', properties: { a: ID, b: ID }, required: ['a', 'b'] },
        response: { 200: COMPARISON, ...PROBLEM_RESPONSES([400, 401, 403, 404, 503]) },
      },
    },
    async (request, reply) => {
      const { a, b } = request.params;
      if (a.includes('\0') || b.includes('\0')) throw new InvalidParameterError('A build ID has no NUL character');
      const comparison = await compareBuilds(store, a, b, visibilityOf(principalOf(request)), { retryAfterSeconds });
      // Serialised here: a comparison of large builds holds tens of thousands of differences, and
      // the route schema's oneOf (for the OpenAPI document) would be tried item by item.
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(comparison));
    },
  );
};
