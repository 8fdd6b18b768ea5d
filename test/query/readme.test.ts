import { describe, expect, it } from 'vitest';
import { completeQuery, explainText, findField, formatDiagnostic, formatQuery, parseQuery } from '../../src/index.js';

// The examples of the README's Library section, checked.
describe('README library examples', () => {
  it('behave as documented', () => {
    const r = parseQuery('buildOutcome:failed buildStartTime>-7d', { now: Date.now() });
    expect(r.ok).toBe(true);
    expect(r.expr?.kind).toBe('and');
    const bad = 'buildOutcom:failed';
    expect(formatDiagnostic(bad, parseQuery(bad).diagnostics[0]!)).toMatch(/^error\[unknownField\]: Unknown field 'buildOutcom'; did you mean 'buildOutcome'\?/);
    expect(formatQuery(parseQuery('BUILDOUTCOME:failed AND NOT (user:bot)').expr!)).toBe('buildOutcome:failed -user:bot');
    expect(completeQuery('buildOutcome:f', 14)).toEqual([expect.objectContaining({ label: 'failed', kind: 'value', from: 13, to: 14 })]);
    expect(explainText('tag:ci or -user:bot').output).toContain('or\n');
    expect(findField('buildduration')?.name).toBe('buildDuration');
  });
});
