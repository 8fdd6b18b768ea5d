import { describe, expect, it } from 'vitest';
import { FIELDS, completeQuery } from '../../src/query/index.js';

/** Completions at the `|` of the text. */
function at(q: string) {
  const cursor = q.indexOf('|');
  return completeQuery(q.replace('|', ''), cursor);
}
const labels = (q: string) => at(q).map((c) => c.label);

describe('completeQuery', () => {
  it('offers every field and `not` at the start', () => {
    const c = at('|');
    expect(c.filter((x) => x.kind === 'field')).toHaveLength(FIELDS.length);
    expect(c.find((x) => x.label === 'buildDuration')).toEqual({
      label: 'buildDuration',
      kind: 'field',
      detail: 'Duration',
      documentation: 'Duration of the build.',
      from: 0,
      to: 0,
    });
    expect(c.filter((x) => x.kind === 'keyword').map((x) => x.label)).toEqual(['not']);
  });

  it('completes a field name being typed, replacing the whole word', () => {
    const c = at('buildO|');
    expect(c[0]).toMatchObject({ label: 'buildOutcome', kind: 'field', from: 0, to: 6 });
    expect(at('tag:x buildSt|art')[0]).toMatchObject({ label: 'buildStartTime', from: 6, to: 16 });
    expect(labels('daemon|')).toContain('native.buildOptions.daemonEnabled');
    expect(at('native.buildOptions.dae|')[0]).toMatchObject({ label: 'native.buildOptions.daemonEnabled', detail: 'Boolean, native only' });
  });

  it('offers the operators valid for a complete field name', () => {
    expect(at('buildDuration|').filter((c) => c.kind === 'operator').map((c) => c.label)).toEqual([':', '>', '>=', '<', '<=']);
    expect(at('tag|').filter((c) => c.kind === 'operator').map((c) => c.label)).toEqual([':']);
    expect(at('buildDuration|').find((c) => c.label === '>')).toMatchObject({ from: 13, to: 13 });
  });

  it('offers closed-set values, null, booleans, relative times and *', () => {
    expect(labels('buildOutcome:|')).toEqual(['succeeded', 'failed', '*']);
    expect(labels('buildTool:j|')).toEqual(['jvmbuild', 'jsbuild']);
    expect(at('buildTool:j|')[0]).toMatchObject({ kind: 'value', from: 10, to: 11 });
    expect(labels('native.configurationCache.outcome:|')).toEqual(['hit', 'miss', 'failed', 'null', '*']);
    expect(labels('hasVerificationFailure:|')).toEqual(['true', 'false', '*']);
    expect(labels('hasVerificationFailure:f|')).toEqual(['false']);
    expect(labels('buildStartTime:-|')).toEqual(['-1h', '-1d', '-7d', '-30d']);
    expect(labels('buildStartTime>|')).toEqual(['-1h', '-1d', '-7d', '-30d']);
    expect(at('buildStartTime>=-7|')[0]).toMatchObject({ label: '-7d', from: 16, to: 18 });
    expect(labels('buildDuration>|')).toEqual([]);
  });

  it('offers and/or/not after a complete term', () => {
    const kw = at('user:bob |').filter((c) => c.kind === 'keyword').map((c) => c.label);
    expect(kw).toEqual(['and', 'or', 'not']);
    expect(at('user:bob o|').find((c) => c.kind === 'keyword')).toMatchObject({ label: 'or', from: 9, to: 10 });
    expect(at('user:bob and |').filter((c) => c.kind === 'keyword').map((c) => c.label)).toEqual(['not']);
  });

  it('offers `to` inside a range', () => {
    expect(labels('buildDuration:[1m |')).toEqual(['to']);
  });

  it('never throws on any text or cursor', () => {
    for (const q of ['"', '(((', 'user:"a b', '[', ']', 'a:[1 to', '!!', 'x:y:z']) {
      for (let i = 0; i <= q.length + 1; i++) expect(() => completeQuery(q, i)).not.toThrow();
    }
  });
});
