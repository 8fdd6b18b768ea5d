import { describe, expect, it } from 'vitest';
import { explainText, formatDiagnostic, formatQuery, parseQuery } from '../../src/query/index.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const canonical = (q: string) => {
  const r = parseQuery(q, { now: NOW });
  expect(r.diagnostics).toEqual([]);
  return formatQuery(r.expr!);
};

describe('formatQuery', () => {
  it.each([
    ['', ''],
    ['buildoutcome:failed', 'buildOutcome:failed'],
    ['a:b'.replace('a', 'user'), 'user:b'],
    ['user:a AND user:b', 'user:a user:b'],
    ['user:a OR user:b', 'user:a or user:b'],
    ['(user:a user:b) or user:c', 'user:a user:b or user:c'],
    ['user:a (user:b or user:c)', 'user:a (user:b or user:c)'],
    ['not user:a', '-user:a'],
    ['!user:a', '-user:a'],
    ['--user:a', 'user:a'],
    ['not (user:a or user:b)', '-(user:a or user:b)'],
    ['((user:a))', 'user:a'],
    ['user:a (user:b user:c)', 'user:a user:b user:c'],
    ['user:a or (user:b or user:c)', 'user:a or user:b or user:c'],
    ['hasVerificationFailure', 'hasVerificationFailure:true'],
    ['user:"a b"', 'user:"a b"'],
    ['user:"ab"', 'user:ab'],
    ['user:"say \\"hi\\""', 'user:"say \\"hi\\""'],
    ['user:a\\*b', 'user:a\\*b'],
    ['user:"[x]"', 'user:"[x]"'],
    ['value:"CI Provider=GitHub*"', 'value:"CI Provider=GitHub*"'],
    ['value:branch', 'value:branch=*'],
    ['buildDuration:[ 1m TO 5m30s ]', 'buildDuration:[1m to 5m30s]'],
    ['buildStartTime>-7d', 'buildStartTime>-7d'],
    ['native.configurationCache.outcome:NULL', 'native.configurationCache.outcome:null'],
    ['user:*', 'user:*'],
  ])('%s -> %s', (q, expected) => {
    expect(canonical(q)).toBe(expected);
    expect(canonical(expected)).toBe(expected);
  });
});

describe('formatDiagnostic', () => {
  it('shows a code frame with a caret under the fault', () => {
    const text = 'buildOutcom:failed';
    const d = parseQuery(text).diagnostics[0]!;
    expect(formatDiagnostic(text, d)).toBe(
      [
        "error[unknownField]: Unknown field 'buildOutcom'; did you mean 'buildOutcome'?",
        ' --> 1:1',
        '  |',
        '1 | buildOutcom:failed',
        '  | ^^^^^^^^^^^',
        '  = expected: buildOutcome',
        '  = did you mean: buildOutcome',
      ].join('\n'),
    );
  });

  it('points one caret past the end for a fault at the end, on the right line', () => {
    const text = 'user:a\ntag:';
    const d = parseQuery(text).diagnostics[0]!;
    const lines = formatDiagnostic(text, d).split('\n');
    expect(lines[3]).toBe('2 | tag:');
    expect(lines[4]).toBe('  |     ^');
  });
});

describe('explainText', () => {
  it('renders the checked AST as an indented tree', () => {
    const r = explainText('buildOutcome:failed (tag:ci or -user:bot) buildStartTime:2024-03-01', { now: NOW });
    expect(r.ok).toBe(true);
    expect(r.output).toBe(
      [
        'query: buildOutcome:failed (tag:ci or -user:bot) buildStartTime:2024-03-01',
        'and',
        '  buildOutcome [String] matches "failed"',
        '  or',
        '    tag [String, multi-valued] matches "ci"',
        '    not',
        '      user [String] matches "bot"',
        '  buildStartTime [Timestamp] within [2024-03-01T00:00:00.000Z, 2024-03-02T00:00:00.000Z) (2024-03-01)',
      ].join('\n'),
    );
  });

  it('shows every diagnostic with a code frame', () => {
    const r = explainText('usr:a tag>x');
    expect(r.ok).toBe(false);
    expect(r.output).toContain('error[unknownField]');
    expect(r.output).toContain('error[invalidOperator]');
    expect(r.output).toContain('1 | usr:a tag>x\n  |          ^');
    expect(r.output.endsWith('2 problems found')).toBe(true);
  });

  it('describes each predicate kind', () => {
    const out = explainText(
      'user:* native.configurationCache.outcome:null hasVerificationFailure:false value:a=b buildDuration>=1m native.environment.jvmMaxMemoryHeapSize:[1g to 2g] native.environment.numberOfCpuCores<4 buildStartTime:[2024-01-01 to 2024-01-31] requested:*x',
      { now: NOW },
    ).output;
    for (const s of [
      'user [String] is known',
      'native.configurationCache.outcome [String, native builds only] is unknown',
      'hasVerificationFailure [Boolean] is false',
      'value [Key-value, multi-valued] has a value named "a" with value "b"',
      'buildDuration [Duration] >= 60000 ms (1m)',
      'from 1000000000 bytes (1g) to 2000000000 bytes (2g), inclusive',
      'native.environment.numberOfCpuCores [Number, native builds only] < 4',
      'within [2024-01-01T00:00:00.000Z, 2024-02-01T00:00:00.000Z)',
      'matches "*x" (wildcard)',
    ]) {
      expect(out).toContain(s);
    }
  });
});
