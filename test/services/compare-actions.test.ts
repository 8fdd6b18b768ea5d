// Records of work that is no task (Bazel actions from an execution log: TaskInputs whose path is
// no task's, with remoteCacheHit) in the comparison: paired by key, missed when one came from the
// cache and the other ran, nothing for one recorded in one build only, and swapped with the builds.

import { describe, expect, it } from 'vitest';
import { event } from '../../src/agents/common-build.js';
import type { BuildFacts } from '../../src/services/build-facts.js';
import { compareFacts, swapDifference } from '../../src/services/compare.js';
import { taskInputFactsOf } from '../../src/services/task-inputs.js';

const action = (path: string, hit: boolean, files: Record<string, string>, outputs: string[] = []) =>
  event('TaskInputs', { path, cacheKey: null, inputs: { inputs: Object.values(files).join(','), 'command line': 'c' }, files: { inputs: files }, outputs, remoteCacheHit: hit }, 1);

const facts = (id: string, events: ReturnType<typeof action>[]): BuildFacts => ({
  id,
  project: 'ws',
  tool: 'targetbuild',
  toolVersion: '4.2.3',
  agentVersion: '1',
  outcome: 'succeeded',
  start: 0,
  duration: 10,
  user: null,
  host: null,
  requested: ['//...'],
  excluded: [],
  environment: {},
  options: {},
  cache: {},
  serverSettings: {},
  tags: [],
  values: {},
  ci: { provider: null, build: null },
  git: { repository: null, commit: null, branch: null, status: null },
  tasks: [{ path: '//gen:a', occurrence: 1, outcome: 'executed', duration: 0, cacheable: null }],
  taskInputs: taskInputFactsOf(events),
  tests: [],
  failures: [],
  dependencies: [],
});

describe('actions in the comparison', () => {
  const a = facts('a', [
    action('//gen:a Genrule out/a.txt', true, { 'gen/a.in': '1' }, ['out/a.txt']),
    action('//gen:b Genrule out/b.txt', true, { 'out/a.txt': '5' }),
    action('//gen:c Genrule out/c.txt', false, { 'gen/c.in': '1' }),
    action('//gen:only-a Genrule out/o.txt', true, { 'gen/o.in': '1' }),
  ]);
  const b = facts('b', [
    action('//gen:a Genrule out/a.txt', false, { 'gen/a.in': '2' }, ['out/a.txt']),
    action('//gen:b Genrule out/b.txt', false, { 'out/a.txt': '6' }),
    action('//gen:c Genrule out/c.txt', false, { 'gen/c.in': '2' }),
  ]);

  it('names the inputs of each action both recorded that differ, missed when it came from the cache in one build only', () => {
    const tasks = compareFacts(a, b).sections.find((s) => s.id === 'tasks')!;
    expect(tasks.differences.map((d) => (d.kind === 'task-inputs' ? [d.path, d.missed, d.cause, d.inputs.flatMap((i) => i.files.map((f) => f.path))] : d.kind))).toEqual([
      ['//gen:a Genrule out/a.txt', true, 'inputs', ['gen/a.in']],
      // Its changed input is another action's output: that action is the cause.
      ['//gen:b Genrule out/b.txt', true, 'upstream', ['out/a.txt']],
      // Ran in both: its inputs differ, no cache missed.
      ['//gen:c Genrule out/c.txt', false, 'inputs', ['gen/c.in']],
    ]);
    // The task and the three actions both builds recorded.
    expect(tasks.compared).toBe(4);
    const summary = compareFacts(a, b).summary.filter((e) => e.reason === 'cache-miss');
    expect(summary.map((e) => (e.difference.kind === 'task-inputs' ? e.difference.path : ''))).toEqual(['//gen:a Genrule out/a.txt']);
  });

  it('swapping the builds swaps every difference, in the same order', () => {
    const c = compareFacts(a, b);
    const back = compareFacts(b, a);
    expect(back.sections).toEqual(c.sections.map((s) => ({ ...s, differences: s.differences.map(swapDifference) })));
  });
});
