import { describe, expect, it } from 'vitest';
import { parseQuery, type CheckedExpr } from '../../src/query/index.js';
import { stripSpans } from './helpers.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const parse = (q: string) => parseQuery(q, { now: NOW });

function expr(q: string): unknown {
  const r = parse(q);
  expect(r.diagnostics).toEqual([]);
  expect(r.ok).toBe(true);
  return stripSpans(r.expr as CheckedExpr);
}

describe('parseQuery: structure', () => {
  it('the empty query matches everything', () => {
    expect(expr('')).toEqual({ kind: 'all' });
    expect(expr('   \n ')).toEqual({ kind: 'all' });
  });

  it('implicit and, explicit and, or, precedence', () => {
    expect(expr('a:1 b:2'.replace(/a|b/g, 'user'))).toMatchObject({ kind: 'and' });
    expect(expr('user:a user:b or user:c')).toEqual(expr('(user:a and user:b) or user:c'));
    expect(expr('user:a or user:b user:c')).toEqual(expr('user:a or (user:b and user:c)'));
    expect(expr('-user:a user:b')).toEqual(expr('(-user:a) user:b'));
  });

  it('keywords are case-insensitive and longer names are not keywords', () => {
    expect(expr('user:a AND user:b Or user:c')).toEqual(expr('user:a and user:b or user:c'));
    expect(expr('NOT user:a')).toEqual(expr('-user:a'));
    const r = parse('order:x');
    expect(r.diagnostics[0]).toMatchObject({ code: 'unknownField', start: 0, end: 5 });
  });
});

const term = (q: string) => expr(q) as { kind: 'term'; field: string; predicate: Record<string, unknown> };

describe('parseQuery: the examples of the semantics', () => {
  it('buildOutcome:failed buildStartTime>-7d', () => {
    expect(expr('buildOutcome:failed buildStartTime>-7d')).toEqual({
      kind: 'and',
      operands: [
        { kind: 'term', field: 'buildOutcome', predicate: { kind: 'pattern', pattern: { segments: ['failed'], text: 'failed' } } },
        {
          kind: 'term',
          field: 'buildStartTime',
          predicate: {
            kind: 'compare',
            op: 'gt',
            value: { type: 'timestamp', instant: NOW - 7 * 86_400_000, spanMs: 1, precision: 'millisecond', relativeMs: 7 * 86_400_000, text: '-7d' },
          },
        },
      ],
    });
  });

  it('project:my-app (tag:CI or tag:nightly) -user:bot', () => {
    const e = expr('project:my-app (tag:CI or tag:nightly) -user:bot') as { kind: string; operands: { kind: string }[] };
    expect(e.kind).toBe('and');
    expect(e.operands.map((o) => o.kind)).toEqual(['term', 'or', 'not']);
  });

  it('value:"CI Provider=GitHub*"', () => {
    expect(term('value:"CI Provider=GitHub*"').predicate).toEqual({
      kind: 'keyValue',
      name: { segments: ['ci provider'], text: 'CI Provider' },
      value: { segments: ['github', ''], text: 'GitHub*' },
    });
  });

  it('requested:*test*', () => {
    expect(term('requested:*test*').predicate).toEqual({ kind: 'pattern', pattern: { segments: ['', 'test', ''], text: '*test*' } });
  });

  it('buildDuration:[1m to 5m30s]', () => {
    expect(term('buildDuration:[1m to 5m30s]').predicate).toEqual({
      kind: 'range',
      from: { type: 'duration', ms: 60_000, text: '1m' },
      to: { type: 'duration', ms: 330_000, text: '5m30s' },
    });
  });

  it('buildStartTime:2024-03-01 is the whole day, UTC', () => {
    expect(term('buildStartTime:2024-03-01').predicate).toEqual({
      kind: 'compare',
      op: 'eq',
      value: { type: 'timestamp', instant: Date.UTC(2024, 2, 1), spanMs: 86_400_000, precision: 'day', text: '2024-03-01' },
    });
  });

  it('buildStartTime:[2024-03-01T08:00+02:00 to 2024-03-02]', () => {
    expect(term('buildStartTime:[2024-03-01T08:00+02:00 to 2024-03-02]').predicate).toEqual({
      kind: 'range',
      from: { type: 'timestamp', instant: Date.UTC(2024, 2, 1, 6), spanMs: 60_000, precision: 'minute', text: '2024-03-01T08:00+02:00' },
      to: { type: 'timestamp', instant: Date.UTC(2024, 2, 2), spanMs: 86_400_000, precision: 'day', text: '2024-03-02' },
    });
  });

  it('native.environment.jvmMaxMemoryHeapSize>=2gib', () => {
    expect(term('native.environment.jvmMaxMemoryHeapSize>=2gib').predicate).toEqual({
      kind: 'compare',
      op: 'ge',
      value: { type: 'storageSize', bytes: 2 * 1024 ** 3, text: '2gib' },
    });
  });

  it('jvmbuild.buildOptions.offlineModeEnabled: bare boolean is true', () => {
    expect(term('jvmbuild.buildOptions.offlineModeEnabled')).toEqual({
      kind: 'term',
      field: 'jvmbuild.buildOptions.offlineModeEnabled',
      predicate: { kind: 'boolean', value: true },
    });
  });

  // `!` before a term on a tool-specific field is a term of that tool: `buildTool:<tool> -term`.
  const nativeOnly = { kind: 'term', field: 'buildTool', predicate: { kind: 'pattern', pattern: { segments: ['native'], text: 'native' } } };

  it('!native.buildCache.remote.enabled: native builds that are not known-true', () => {
    expect(expr('!native.buildCache.remote.enabled')).toEqual({
      kind: 'and',
      operands: [nativeOnly, { kind: 'not', operand: { kind: 'term', field: 'native.buildCache.remote.enabled', predicate: { kind: 'boolean', value: true } } }],
    });
  });

  it('!native.configurationCache.outcome:*: native builds whose outcome is unknown', () => {
    expect(expr('!native.configurationCache.outcome:*')).toEqual({
      kind: 'and',
      operands: [nativeOnly, { kind: 'not', operand: { kind: 'term', field: 'native.configurationCache.outcome', predicate: { kind: 'known' } } }],
    });
  });

  it('`-` and `!` before a group stay complement; `!` on a generic field is complement too', () => {
    expect(expr('-native.configurationCache.outcome:*')).toEqual({
      kind: 'not',
      operand: { kind: 'term', field: 'native.configurationCache.outcome', predicate: { kind: 'known' } },
    });
    expect(expr('!(native.buildCache.remote.enabled)')).toEqual({
      kind: 'not',
      operand: { kind: 'term', field: 'native.buildCache.remote.enabled', predicate: { kind: 'boolean', value: true } },
    });
    expect(expr('!user:*')).toEqual({ kind: 'not', operand: { kind: 'term', field: 'user', predicate: { kind: 'known' } } });
  });
});
