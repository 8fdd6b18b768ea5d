import { describe, expect, it } from 'vitest';
import { FIELDS, completeQuery, valuePosition } from '../../src/query/index.js';

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
      insert: 'buildDuration:',
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
  });

  // Issue 13 item 21: places where completion offered nothing useful, or the wrong thing first.
  it('offers example values after a comparison of an ordered field, and a range after ":"', () => {
    expect(labels('buildDuration>|')).toEqual(['30s', '1m', '5m', '1h']);
    expect(labels('buildDuration>=1|')).toEqual(['1m', '1h']);
    expect(labels('buildDuration:|')).toEqual(['30s', '1m', '5m', '1h', '[30s to 1m]', '*']);
    expect(labels('native.environment.jvmMaxMemoryHeapSize>|')).toEqual(['512mb', '2gib']);
    expect(at('buildDuration>|')[0]).toMatchObject({ kind: 'value', from: 14, to: 14 });
  });

  it('offers the closed-set values that contain the typed text, or all of them, when none starts with it', () => {
    expect(labels('buildTool:gr|')).toEqual(['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild']);
    expect(labels('buildTool:build|')).toEqual(['jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild']);
    expect(at('buildTool:gr|')[0]).toMatchObject({ label: 'native', from: 10, to: 12 });
    expect(labels('buildOutcome:fail|')).toEqual(['failed']);
  });

  it('ranks and/or first after a complete term when they match the typed prefix', () => {
    expect(at('user:bob o|')[0]).toMatchObject({ label: 'or', kind: 'keyword', from: 9, to: 10 });
    expect(at('user:bob a|')[0]).toMatchObject({ label: 'and', kind: 'keyword' });
    expect(at('(tag:x) an|')[0]).toMatchObject({ label: 'and', kind: 'keyword' });
    // At the start of a term a field still comes first.
    expect(at('o|')[0]!.kind).toBe('field');
    // A complete field name keeps its operators first.
    expect(at('user:bob tag|')[0]).toMatchObject({ label: ':', kind: 'operator' });
  });

  it('offers fields after an unclosed ( and `)` after a term inside it', () => {
    expect(at('(|').filter((c) => c.kind === 'field')).toHaveLength(FIELDS.length);
    expect(labels('(tag:x |')[0]).toBe(')');
    expect(labels('(tag:x or (user:a) |')[0]).toBe(')');
    expect(labels('(tag:x) |')).not.toContain(')');
    expect(labels('(tag:x |)')).not.toContain(')');
  });

  it('inserts ":" with an accepted field unless an operator follows', () => {
    expect(at('proj|')[0]).toMatchObject({ label: 'project', insert: 'project:', from: 0, to: 4 });
    expect(at('proj|:billing')[0]).not.toHaveProperty('insert');
    expect(at('buildDur|>5m')[0]).not.toHaveProperty('insert');
  });

  it('says where a value is typed (for values from the data)', () => {
    const pos = (q: string) => {
      const v = valuePosition(q.replace('|', ''), q.indexOf('|'));
      return v && { field: v.field.name, op: v.op, prefix: v.prefix, from: v.from, to: v.to };
    };
    expect(pos('project:|')).toEqual({ field: 'project', op: ':', prefix: '', from: 8, to: 8 });
    expect(pos('tag:x project:bi|ll')).toEqual({ field: 'project', op: ':', prefix: 'bi', from: 14, to: 18 });
    expect(pos('user:"ann|')).toEqual({ field: 'user', op: ':', prefix: 'ann', from: 5, to: 9 });
    expect(pos('project|')).toBeUndefined();
    expect(pos('project:x |')).toBeUndefined();
    expect(pos('nofield:|')).toBeUndefined();
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
