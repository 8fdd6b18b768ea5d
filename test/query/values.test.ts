import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, type CheckedExpr } from '../../src/query/index.js';
import { stripSpans } from './helpers.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const DAY = 86_400_000;

function predicate(q: string): unknown {
  const r = parseQuery(q, { now: NOW });
  expect(r.diagnostics).toEqual([]);
  return (stripSpans(r.expr as CheckedExpr) as { predicate: unknown }).predicate;
}
const compareValue = (q: string) => (predicate(q) as { value: Record<string, unknown> }).value;

describe('String fields', () => {
  it('exact, case-insensitive, wildcards, escapes, quotes', () => {
    expect(predicate('user:Bob')).toEqual({ kind: 'pattern', pattern: { segments: ['bob'], text: 'Bob' } });
    expect(predicate('user:bo*')).toEqual({ kind: 'pattern', pattern: { segments: ['bo', ''], text: 'bo*' } });
    expect(predicate('user:*b*o*')).toEqual({ kind: 'pattern', pattern: { segments: ['', 'b', 'o', ''], text: '*b*o*' } });
    expect(predicate('user:a\\*b')).toEqual({ kind: 'pattern', pattern: { segments: ['a*b'], text: 'a\\*b' } });
    expect(predicate('user:"a b*"')).toEqual({ kind: 'pattern', pattern: { segments: ['a b', ''], text: 'a b*' } });
    expect(predicate('user:"say \\"hi\\" \\\\ (x)"')).toEqual({ kind: 'pattern', pattern: { segments: ['say "hi" \\ (x)'], text: 'say "hi" \\ (x)' } });
    expect(predicate('user:"\\*"')).toEqual({ kind: 'pattern', pattern: { segments: ['*'], text: '\\*' } });
    expect(predicate('project:ÄRGER')).toEqual({ kind: 'pattern', pattern: { segments: ['ärger'], text: 'ÄRGER' } });
  });

  it('keywords and special characters are values after the operator', () => {
    expect(predicate('tag:"and"')).toEqual({ kind: 'pattern', pattern: { segments: ['and'], text: 'and' } });
    expect(predicate('hostname:a:b=c!')).toEqual({ kind: 'pattern', pattern: { segments: ['a:b=c!'], text: 'a:b=c!' } });
  });

  it('`field:*` is "known" for every type', () => {
    for (const f of ['user', 'value', 'buildDuration', 'buildStartTime', 'hasVerificationFailure', 'native.environment.numberOfCpuCores', 'native.environment.jvmMaxMemoryHeapSize']) {
      expect(predicate(`${f}:*`)).toEqual({ kind: 'known' });
      expect(predicate(`${f}:"*"`)).toEqual({ kind: 'known' });
    }
  });

  it('closed sets: buildOutcome, buildTool, configurationCache.outcome with null', () => {
    expect(predicate('buildOutcome:FAILED')).toEqual({ kind: 'pattern', pattern: { segments: ['failed'], text: 'FAILED' } });
    expect(predicate('buildTool:jsbuild')).toEqual({ kind: 'pattern', pattern: { segments: ['jsbuild'], text: 'jsbuild' } });
    expect(predicate('buildTool:*build')).toEqual({ kind: 'pattern', pattern: { segments: ['', 'build'], text: '*build' } });
    for (const v of ['hit', 'miss', 'failed']) expect(predicate(`native.configurationCache.outcome:${v}`)).toMatchObject({ kind: 'pattern' });
    expect(predicate('native.configurationCache.outcome:null')).toEqual({ kind: 'unknown' });
    expect(predicate('native.configurationCache.outcome:NULL')).toEqual({ kind: 'unknown' });
  });
});

describe('Key-value fields', () => {
  it('split at the first unescaped =', () => {
    expect(predicate('value:a=b=c')).toEqual({ kind: 'keyValue', name: { segments: ['a'], text: 'a' }, value: { segments: ['b=c'], text: 'b=c' } });
    expect(predicate('value:a\\=b=c')).toEqual({ kind: 'keyValue', name: { segments: ['a=b'], text: 'a\\=b' }, value: { segments: ['c'], text: 'c' } });
    expect(predicate('value:Branch=*')).toEqual({ kind: 'keyValue', name: { segments: ['branch'], text: 'Branch' }, value: { segments: ['', ''], text: '*' } });
    expect(predicate('value:*=main')).toEqual({ kind: 'keyValue', name: { segments: ['', ''], text: '*' }, value: { segments: ['main'], text: 'main' } });
    expect(predicate('value:"CI Provider=GitHub Actions"')).toEqual({
      kind: 'keyValue',
      name: { segments: ['ci provider'], text: 'CI Provider' },
      value: { segments: ['github actions'], text: 'GitHub Actions' },
    });
  });

  it('`value:name` without = means name=*', () => {
    expect(predicate('value:Branch')).toEqual(predicate('value:Branch=*'));
    expect(predicate('value:Branch')).toEqual({ kind: 'keyValue', name: { segments: ['branch'], text: 'Branch' }, value: { segments: ['', ''], text: '*' } });
  });
});

describe('Durations', () => {
  it.each([
    ['250ms', 250],
    ['1s', 1000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['2d', 2 * DAY],
    ['1H30M', 5_400_000],
    ['5m30s', 330_000],
    ['PT1H30M', 5_400_000],
    ['P1DT2H', DAY + 7_200_000],
    ['PT0.5S', 500],
    ['pt2m', 120_000],
    ['P1W', 7 * DAY],
  ])('%s = %d ms', (text, ms) => {
    expect(compareValue(`buildDuration:${text}`)).toEqual({ type: 'duration', ms, text });
  });

  it('comparisons', () => {
    for (const [op, name] of [['>', 'gt'], ['>=', 'ge'], ['<', 'lt'], ['<=', 'le'], [':', 'eq']] as const) {
      expect(predicate(`buildDuration${op}5m`)).toEqual({ kind: 'compare', op: name, value: { type: 'duration', ms: 300_000, text: '5m' } });
    }
  });
});

describe('Timestamps', () => {
  it.each([
    ['2024-03-01', Date.UTC(2024, 2, 1), 'day', DAY],
    ['2024-03-01T08:30', Date.UTC(2024, 2, 1, 8, 30), 'minute', 60_000],
    ['2024-03-01T08:30:15', Date.UTC(2024, 2, 1, 8, 30, 15), 'second', 1000],
    ['2024-03-01T08:30:15.250', Date.UTC(2024, 2, 1, 8, 30, 15, 250), 'millisecond', 1],
    ['2024-03-01T08:30Z', Date.UTC(2024, 2, 1, 8, 30), 'minute', 60_000],
    ['2024-03-01T08:30+02:00', Date.UTC(2024, 2, 1, 6, 30), 'minute', 60_000],
    ['2024-03-01T08:30-05:30', Date.UTC(2024, 2, 1, 14, 0), 'minute', 60_000],
    ['2024-02-29', Date.UTC(2024, 1, 29), 'day', DAY],
  ])('%s', (text, instant, precision, spanMs) => {
    expect(compareValue(`buildStartTime:${text}`)).toEqual({ type: 'timestamp', instant, precision, spanMs, text });
  });

  it.each([
    // Python's isoformat() writes 6 fraction digits; Java's Instant and Go up to 9.
    ['2024-03-01T08:30:15.250123', Date.UTC(2024, 2, 1, 8, 30, 15, 250)],
    ['2024-03-01T08:30:15.999999999Z', Date.UTC(2024, 2, 1, 8, 30, 15, 999)],
    ['2024-03-01T08:30:15.0000001+01:00', Date.UTC(2024, 2, 1, 7, 30, 15, 0)],
  ])('%s: up to 9 fraction digits, cut to the millisecond', (text, instant) => {
    expect(compareValue(`buildStartTime:${text}`)).toEqual({ type: 'timestamp', instant, precision: 'millisecond', spanMs: 1, text });
  });

  it('10 fraction digits are refused', () => {
    expect(parseQuery('buildStartTime:2024-03-01T08:30:15.1234567890', { now: NOW }).diagnostics[0]?.message).toContain('1 to 9 fraction digits');
  });

  it('law: digits after the third never change the instant (the millisecond that holds it)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) }), fc.stringMatching(/^\d{0,6}$/), (ms, extra) => {
        const iso = new Date(ms).toISOString().replace('Z', `${extra}Z`);
        expect((compareValue(`buildStartTime:${iso}`) as { instant: number }).instant).toBe(ms);
      }),
    );
  });

  it('relative times count back from the injected now', () => {
    expect(compareValue('buildStartTime>-5d')).toEqual({ type: 'timestamp', instant: NOW - 5 * DAY, spanMs: 1, precision: 'millisecond', relativeMs: 5 * DAY, text: '-5d' });
    expect(compareValue('buildStartTime>-PT2H')).toMatchObject({ instant: NOW - 7_200_000 });
    expect(predicate('buildStartTime:[-7d to -1d]')).toMatchObject({ kind: 'range', from: { instant: NOW - 7 * DAY }, to: { instant: NOW - DAY } });
  });
});

describe('Numbers', () => {
  it('integers, decimals, negatives; exact, comparisons, ranges', () => {
    expect(compareValue('native.environment.numberOfCpuCores:8')).toEqual({ type: 'number', value: 8, text: '8' });
    expect(compareValue('native.environment.numberOfCpuCores>=1.5')).toEqual({ type: 'number', value: 1.5, text: '1.5' });
    expect(compareValue('native.environment.numberOfCpuCores>-2')).toEqual({ type: 'number', value: -2, text: '-2' });
    expect(predicate('native.buildOptions.maxNumberOfWorkers:[2 to 8]')).toEqual({
      kind: 'range',
      from: { type: 'number', value: 2, text: '2' },
      to: { type: 'number', value: 8, text: '8' },
    });
    expect(predicate('native.buildOptions.maxNumberOfWorkers:[-3 to -3]')).toMatchObject({ kind: 'range' });
  });
});

describe('Storage sizes', () => {
  it.each([
    ['4096', 4096],
    ['4096b', 4096],
    ['512MB', 512_000_000],
    ['512m', 512_000_000],
    ['1.5g', 1_500_000_000],
    ['2gib', 2 * 1024 ** 3],
    ['2GiB', 2 * 1024 ** 3],
    ['1ki', 1024],
    ['1kb', 1000],
    ['1t', 1e12],
    ['1TiB', 1024 ** 4],
  ])('%s = %d bytes', (text, bytes) => {
    expect(compareValue(`native.environment.jvmMaxMemoryHeapSize:${text}`)).toEqual({ type: 'storageSize', bytes, text });
  });
});

describe('Booleans', () => {
  it('bare, true, false, case-insensitive, known, negations', () => {
    expect(predicate('hasVerificationFailure')).toEqual({ kind: 'boolean', value: true });
    expect(predicate('hasVerificationFailure:true')).toEqual({ kind: 'boolean', value: true });
    expect(predicate('hasVerificationFailure:FALSE')).toEqual({ kind: 'boolean', value: false });
    expect(predicate('hasNonVerificationFailure:True')).toEqual({ kind: 'boolean', value: true });
    const r = parseQuery('!hasVerificationFailure -hasVerificationFailure:* not hasVerificationFailure');
    expect(stripSpans(r.expr!)).toEqual({
      kind: 'and',
      operands: [
        { kind: 'not', operand: { kind: 'term', field: 'hasVerificationFailure', predicate: { kind: 'boolean', value: true } } },
        { kind: 'not', operand: { kind: 'term', field: 'hasVerificationFailure', predicate: { kind: 'known' } } },
        { kind: 'not', operand: { kind: 'term', field: 'hasVerificationFailure', predicate: { kind: 'boolean', value: true } } },
      ],
    });
  });
});

describe('field names', () => {
  it('are case-insensitive and resolve to the catalog entry', () => {
    expect(stripSpans(parseQuery('buildoutcome:failed').expr!)).toMatchObject({ field: 'buildOutcome' });
    expect(stripSpans(parseQuery('NATIVE.BUILDOPTIONS.DAEMONENABLED').expr!)).toMatchObject({ field: 'native.buildOptions.daemonEnabled' });
  });
});
