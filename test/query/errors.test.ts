import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const diags = (q: string) => {
  const r = parseQuery(q, { now: NOW });
  expect(r.ok).toBe(false);
  expect(r.expr).toBeUndefined();
  return r.diagnostics;
};
const one = (q: string) => {
  const d = diags(q);
  expect(d).toHaveLength(1);
  return d[0]!;
};

describe('syntax errors, with exact positions', () => {
  it('missing value at the end points at the input length', () => {
    expect(one('user:')).toMatchObject({ code: 'syntax', start: 5, end: 5, line: 1, column: 6, expected: ['value', '"quoted value"', '[from to to]'] });
    expect(one('user:   ')).toMatchObject({ code: 'syntax', start: 8, end: 8 });
  });

  it('a space between operator and value', () => {
    const d = diags('user: bob');
    expect(d[0]).toMatchObject({ code: 'syntax', start: 6, end: 9 });
    expect(d[0]!.message).toMatch(/without a space/);
  });

  it('a space before a quoted value or a range is reported the same way', () => {
    expect(one('user: "bob"')).toMatchObject({ code: 'syntax', start: 5, end: 6 });
    expect(one('buildDuration:  [1m to 2m]')).toMatchObject({ code: 'syntax', start: 14, end: 16 });
  });

  it('dangling and / or / not / -', () => {
    expect(one('user:a and')).toMatchObject({ code: 'syntax', start: 10, end: 10, expected: ['a term'] });
    expect(one('user:a or')).toMatchObject({ code: 'syntax', start: 9, end: 9 });
    expect(one('user:a not')).toMatchObject({ code: 'syntax', start: 10, end: 10 });
    expect(one('-')).toMatchObject({ code: 'syntax', start: 1, end: 1 });
    expect(one('user:a or or user:b')).toMatchObject({ code: 'syntax', start: 10, end: 12 });
  });

  it('or / and with nothing on the left', () => {
    expect(one('or user:a')).toMatchObject({ code: 'syntax', start: 0, end: 2 });
    expect(one('AND user:a')).toMatchObject({ code: 'syntax', start: 0, end: 3 });
  });

  it('parentheses', () => {
    expect(one('(user:a')).toMatchObject({ code: 'syntax', start: 7, end: 7, expected: ["')'"] });
    expect(one('user:a)')).toMatchObject({ code: 'syntax', start: 6, end: 7 });
    expect(one('()')).toMatchObject({ code: 'syntax', start: 0, end: 2 });
    const d = diags('(user:a ] user:b');
    expect(d.map((x) => [x.start, x.end])).toEqual([
      [8, 9],
      [16, 16],
    ]);
  });

  it('ranges', () => {
    expect(one('buildDuration:[1m 5m]')).toMatchObject({ start: 18, end: 20, expected: ["'to'"] });
    expect(one('buildDuration:[1m to]')).toMatchObject({ start: 20, end: 21 });
    expect(one('buildDuration:[1m to 5m')).toMatchObject({ start: 23, end: 23, expected: ["']'"] });
    expect(one('buildDuration:[')).toMatchObject({ start: 15, end: 15 });
  });

  it('unterminated quotes', () => {
    expect(one('user:"abc')).toMatchObject({ code: 'syntax', start: 5, end: 9, expected: ['"'] });
    expect(one('user:"abc\\"')).toMatchObject({ code: 'syntax', start: 5, end: 11 });
  });

  it('free text and stray characters', () => {
    expect(one('"hello"')).toMatchObject({ code: 'syntax', start: 0, end: 7 });
    expect(diags('user:a = b')[0]).toMatchObject({ code: 'syntax', start: 7, end: 8 });
    expect(diags(':a')[0]).toMatchObject({ code: 'syntax', start: 0, end: 1 });
    expect(one('[1 to 2]').code).toBe('syntax');
  });

  it('nesting deeper than 200 levels is refused with a diagnostic, not a stack overflow', () => {
    expect(parseQuery('('.repeat(200) + 'user:a' + ')'.repeat(200)).ok).toBe(true);
    expect(parseQuery('-'.repeat(200) + 'user:a').ok).toBe(true);
    for (const q of ['('.repeat(5000), '-'.repeat(50_000) + 'user:a', 'not '.repeat(20_000) + 'user:a', '-('.repeat(101) + 'user:a' + ')'.repeat(101)]) {
      const d = diags(q);
      expect(d).toHaveLength(1);
      expect(d[0]!.message).toMatch(/more than 200 levels/);
    }
    expect(one('-('.repeat(101) + 'user:a' + ')'.repeat(101))).toMatchObject({ start: 200, end: 201 });
  });

  it('multi-line queries get line and column', () => {
    expect(one('user:a\n  tag:')).toMatchObject({ start: 13, line: 2, column: 7 });
    expect(one('user:a\r\nfoo:b')).toMatchObject({ code: 'unknownField', start: 8, end: 11, line: 2, column: 1 });
  });
});

describe('type errors', () => {
  it('unknown field with did-you-mean within a third of the length', () => {
    expect(one('buildOutcom:failed')).toMatchObject({ code: 'unknownField', start: 0, end: 11, suggestion: 'buildOutcome' });
    expect(one('usr:bob')).toMatchObject({ code: 'unknownField', start: 0, end: 3, suggestion: 'user' });
    const far = one('xyzzy:bob');
    expect(far.suggestion).toBeUndefined();
    expect(one('daemonEnabled')).toMatchObject({ code: 'unknownField', suggestion: 'native.buildOptions.daemonEnabled' });
  });

  it('closed-set values list the allowed ones, with did-you-mean', () => {
    const d = one('buildOutcome:faild');
    expect(d).toMatchObject({ code: 'invalidValue', start: 13, end: 18, suggestion: 'failed', expected: ['succeeded', 'failed'] });
    expect(d.message).toContain('succeeded, failed');
    expect(one('buildTool:gradle')).toMatchObject({ code: 'invalidValue', suggestion: 'native', expected: ['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild'] });
    // The tools' own names, as people type them, lead to their kinds.
    for (const [typed, kind] of [['Maven', 'jvmbuild'], ['bazel', 'targetbuild'], ['sbt', 'scalabuild'], ['yarn', 'jsbuild'], ['pytest', 'pybuild'], ['python', 'pybuild']]) {
      expect(one(`buildTool:${typed}`), typed).toMatchObject({ code: 'invalidValue', suggestion: kind });
    }
    expect(one('native.configurationCache.outcome:mis')).toMatchObject({ suggestion: 'miss', expected: ['hit', 'miss', 'failed', 'null'] });
    expect(one('buildOutcome:null').code).toBe('invalidValue');
    expect(one('buildTool:x*').code).toBe('invalidValue');
  });

  it('operators that do not fit the type', () => {
    expect(one('tag>x')).toMatchObject({ code: 'invalidOperator', start: 3, end: 4, expected: [':'] });
    expect(one('value<=a=b')).toMatchObject({ code: 'invalidOperator', start: 5, end: 7 });
    expect(one('hasVerificationFailure>true')).toMatchObject({ code: 'invalidOperator' });
    expect(one('user:[a to b]')).toMatchObject({ code: 'invalidOperator', start: 5, end: 13 });
    expect(one('buildDuration>[1m to 2m]')).toMatchObject({ code: 'invalidOperator', start: 13, end: 14 });
    expect(one('user')).toMatchObject({ code: 'invalidOperator', start: 0, end: 4 });
    expect(one('buildDuration>*')).toMatchObject({ code: 'invalidValue', start: 14, end: 15 });
  });

  it('invalid values of each type', () => {
    expect(one('buildDuration:5')).toMatchObject({ code: 'invalidValue', start: 14, end: 15 });
    expect(one('buildDuration:5x')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildDuration:-5m')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildDuration:P1Y')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildStartTime:2024-13-01')).toMatchObject({ code: 'invalidValue', start: 15, end: 25 });
    expect(one('buildStartTime:2023-02-29')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildStartTime:2024-01-01T25:00')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildStartTime:yesterday')).toMatchObject({ code: 'invalidValue' });
    expect(one('buildStartTime>-5x')).toMatchObject({ code: 'invalidValue' });
    expect(one('native.environment.numberOfCpuCores:many')).toMatchObject({ code: 'invalidValue' });
    expect(one('native.environment.jvmMaxMemoryHeapSize:2qb')).toMatchObject({ code: 'invalidValue' });
    expect(one('hasVerificationFailure:yes')).toMatchObject({ code: 'invalidValue', expected: ['true', 'false', '*'] });
    expect(one('hasVerificationFailure:tru')).toMatchObject({ suggestion: 'true' });
    expect(one('value:=x')).toMatchObject({ code: 'invalidValue' });
  });

  it('inverted ranges', () => {
    expect(one('buildDuration:[5m to 1m]')).toMatchObject({ code: 'invalidRange', start: 14, end: 24 });
    expect(one('buildStartTime:[2024-03-02 to 2024-03-01]').code).toBe('invalidRange');
    expect(one('buildStartTime:[-1d to -7d]').code).toBe('invalidRange');
    expect(one('native.environment.jvmMaxMemoryHeapSize:[1gib to 1g]').code).toBe('invalidRange');
    expect(one('native.environment.numberOfCpuCores:[8 to 2]').code).toBe('invalidRange');
    expect(one('native.environment.numberOfCpuCores:[* to 2]').code).toBe('invalidValue');
  });

  it('every error of a query is reported, in order', () => {
    const d = diags('usr:a tag>x buildDuration:[5m to 1m] (hasVerificationFailure:maybe');
    expect(d.map((x) => x.code)).toEqual(['unknownField', 'invalidOperator', 'invalidRange', 'invalidValue', 'syntax']);
    expect(d.at(-1)).toMatchObject({ start: 66, end: 66 });
  });

  it('a partial syntax tree survives errors', () => {
    const r = parseQuery('user:a (tag:b or');
    expect(r.ok).toBe(false);
    expect(r.syntax).toMatchObject({ kind: 'and', operands: [{ kind: 'term' }, { kind: 'group', inner: { kind: 'term', field: { name: 'tag' } } }] });
  });
});
