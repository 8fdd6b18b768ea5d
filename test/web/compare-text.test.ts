// The comparison page's wording (web/src/compare-text.ts), in Node: every kind of difference is
// worded with its values in A and B, and the summary's lines and labels say which way it went.

import { describe, expect, it } from 'vitest';
import type { Difference, SummaryEntry } from '../../src/services/comparison.js';
import { inputsReasons, summaryLabel, summaryLine, word } from '../../web/src/compare-text.js';

const task = { path: ':test', occurrence: 1, outcome: 'failed', duration: 1_500, cacheable: true } as const;
const test = { suite: 'acme.PriceTest', name: 'addsTax', outcome: 'failed', duration: 20, attempts: 1 } as const;
const failure = { classification: 'verification', message: 'Tests failed' };

describe('compare page wording', () => {
  it('words every kind of difference', () => {
    const cases: [Difference, string, string, string][] = [
      [{ kind: 'field', group: 'build', name: 'duration', before: 4_000, after: 13_200 }, 'Duration', '4.0s', '13.2s'],
      [{ kind: 'field', group: 'environment', name: 'jvmVersion', before: '17', after: null }, 'Environment: jvmVersion', '17', ''],
      [{ kind: 'list', group: 'requested', name: 'requested', added: ['publish'], removed: ['check'] }, 'Requested tasks', 'check', 'publish'],
      [{ kind: 'task-added', task }, 'Task :test', '', 'failed, 1.5s'],
      [{ kind: 'task-removed', task: { ...task, occurrence: 2 } }, 'Task :test (run 2)', 'failed, 1.5s', ''],
      [{ kind: 'task-outcome', path: ':a', occurrence: 1, before: 'from-cache', after: 'executed' }, 'Task :a', 'from-cache', 'executed'],
      [{ kind: 'task-duration', path: ':a', occurrence: 1, before: 40, after: 9_000 }, 'Task :a', '40ms', '9.0s'],
      [{ kind: 'task-cacheable', path: ':a', occurrence: 1, before: true, after: null }, 'Task :a cacheable', 'yes', 'not said'],
      [{ kind: 'test-added', test }, 'Test acme.PriceTest.addsTax', '', 'failed'],
      [{ kind: 'test-removed', test: { ...test, outcome: null } }, 'Test acme.PriceTest.addsTax', 'no outcome', ''],
      [{ kind: 'test-outcome', suite: '', name: 'solo', before: 'passed', after: 'failed' }, 'Test solo', 'passed', 'failed'],
      [{ kind: 'test-duration', suite: 'S', name: 't', before: 10, after: 5 }, 'Test S.t', '10ms', '5ms'],
      // A parametrized test's case, as the build page names it.
      [{ kind: 'test-outcome', suite: 'tests/test_x.py', name: 'test_add', parameters: '1-2', before: 'passed', after: 'failed' }, 'Test tests/test_x.py.test_add[1-2]', 'passed', 'failed'],
      [{ kind: 'test-added', test: { ...test, parameters: 'EUR' } }, 'Test acme.PriceTest.addsTax[EUR]', '', 'failed'],
      [{ kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:money', before: '1.2', after: '1.3' }, 'Dependency acme:money (compileClasspath)', '1.2', '1.3'],
      [{ kind: 'dependency', project: 'org.acme:shop', configuration: 'test', module: 'junit:junit', before: null, after: '4.13.2' }, 'Dependency junit:junit (test of org.acme:shop)', '', '4.13.2'],
      [{ kind: 'dependency', project: ':app', configuration: 'runtimeClasspath', module: 'project :lib', before: '', after: null }, 'Dependency project :lib (runtimeClasspath of :app)', 'present', ''],
      [{ kind: 'list', group: 'configurations', name: 'resolved', added: [':lib testCompileClasspath'], removed: [] }, 'Resolved configurations', '', ':lib testCompileClasspath'],
      [{ kind: 'failure-added', failure }, 'Failure (verification)', '', 'Tests failed'],
      [{ kind: 'failure-removed', failure }, 'Failure (verification)', 'Tests failed', ''],
    ];
    for (const [d, subject, before, after] of cases) expect(word(d), d.kind).toMatchObject({ subject, before, after });
    expect(word(cases[6]![0]).change).toBe('+9.0s');
    expect(word(cases[11]![0]).change).toBe('−5ms');
  });

  it('says which way a summary entry went', () => {
    const entry = (reason: SummaryEntry['reason'], difference: Difference): SummaryEntry => ({ reason, difference });
    const breaks = entry('failing-test', { kind: 'test-outcome', suite: 'S', name: 't', before: 'passed', after: 'failed' });
    const heals = entry('failing-test', { kind: 'test-outcome', suite: 'S', name: 't', before: 'failed', after: 'passed' });
    expect([summaryLabel(breaks), summaryLine(breaks)]).toEqual(['newly failing test', 'Test S.t: passed → failed']);
    expect(summaryLabel(heals)).toBe('fixed test');
    expect(summaryLabel(entry('failing-task', { kind: 'task-added', task }))).toBe('newly failing task');
    expect(summaryLine(entry('failure', { kind: 'failure-added', failure }))).toBe('Failure (verification), only in B: Tests failed');
    expect(summaryLine(entry('requested', { kind: 'list', group: 'requested', name: 'requested', added: ['publish'], removed: ['check'] }))).toBe('Requested tasks: +publish −check');
    const moved = entry('dependency', { kind: 'dependency', project: ':', configuration: 'compileClasspath', module: 'acme:money', before: '1.2', after: '1.3' });
    expect([summaryLabel(moved), summaryLine(moved)]).toEqual(['dependency', 'Dependency acme:money (compileClasspath): 1.2 → 1.3']);
    expect(summaryLabel(entry('slower-task', { kind: 'task-duration', path: ':a', occurrence: 1, before: 900, after: 100 }))).toBe('faster task');
  });

  it('says why a task missed the cache: the root inputs in the summary, every input in the list', () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `src/F${i}.java`, change: 'changed' as const }));
    const d: Extract<Difference, { kind: 'task-inputs' }> = {
      kind: 'task-inputs',
      path: ':compileJava',
      occurrence: 1,
      missed: true,
      before: 'k1',
      after: 'k2',
      implementation: false,
      inputs: [
        { name: 'classpath', change: 'changed', files: [{ path: 'build/libs/lib.jar', change: 'changed' }], filesOmitted: false, producedBy: [':lib:jar'] },
        { name: 'options.compilerArgs', change: 'changed', files: [], filesOmitted: false, producedBy: [] },
        { name: 'source', change: 'changed', files: files(7), filesOmitted: false, producedBy: [] },
        { name: 'options.release', change: 'added', files: [], filesOmitted: false, producedBy: [] },
      ],
      cause: 'inputs',
    };
    expect(word(d)).toMatchObject({ subject: 'Task :compileJava cache key', before: 'k1', after: 'k2' });
    expect(inputsReasons(d)).toEqual([
      'input classpath (outputs of :lib:jar): build/libs/lib.jar changed',
      'input options.compilerArgs changed',
      'input source: src/F0.java changed, src/F1.java changed, src/F2.java changed, src/F3.java changed, src/F4.java changed, 2 more files',
      'input options.release added (only in B)',
    ]);
    const e: SummaryEntry = { reason: 'cache-miss', difference: d };
    expect(summaryLabel(e)).toBe('cache miss');
    expect(summaryLine(e)).toBe(`Task :compileJava: ${inputsReasons(d).slice(1).join('; ')}`);
    expect(inputsReasons({ ...d, inputs: [], implementation: true, cause: 'implementation' })).toEqual(["the task's implementation (its class loader or actions)"]);
    expect(inputsReasons({ ...d, inputs: [], cause: 'unknown' })).toEqual(['no recorded input differs']);
  });
});
