// The wording and scales of the Tests pages (pure, tested in Node): a verdict in words, an
// estimated failure probability with its interval, the duration chart's axis.

import type { Estimate, FlakyEvidence, Verdict, VerdictKind } from '../../src/services/web-api.js';

export const VERDICT_LABELS: Readonly<Record<VerdictKind, string>> = {
  flaky: 'flaky',
  broken: 'broken',
  regressed: 'newly failing',
  passing: 'passing',
  'no-runs': 'no runs',
};

/** A probability as people read it: `0%`, `0.4%`, `12%`, `100%` (one decimal under 10%). */
export function pct(x: number): string {
  if (!Number.isFinite(x) || x <= 0) return '0%';
  if (x >= 1) return '100%';
  const v = x * 100;
  if (v < 10) return `${Math.min(9.9, Math.max(0.1, Math.round(v * 10) / 10))}%`;
  return `${Math.min(99, Math.round(v))}%`;
}

/** `12% (95% interval 6–21%)`. */
export function estimateText(e: Estimate): string {
  return `${pct(e.p)} (95% interval ${pct(e.low)}–${pct(e.high)})`;
}

/** `4 of 27 attempts failed`. */
export function attemptsText(e: Estimate): string {
  return `${e.failures.toLocaleString('en-US')} of ${e.trials.toLocaleString('en-US')} attempt${e.trials === 1 ? '' : 's'} failed`;
}

/** Why the verdict is what it is, in one sentence (the builds it names are linked by the page). */
export function verdictSentence(v: Verdict): string {
  switch (v.kind) {
    case 'flaky': {
      const kinds = new Set(v.evidence.map((e) => e.kind));
      const why: string[] = [];
      if (kinds.has('retried')) why.push('it failed and then passed on a retry in the same build');
      if (kinds.has('same-commit')) why.push('it failed and passed on the same commit');
      if (kinds.has('intermittent')) why.push('it failed now and then, with passes in between');
      return `Flaky: ${why.join('; ')}.`;
    }
    case 'broken':
      return `Broken: it has failed in every build since it started failing (${v.failedRuns} build${v.failedRuns === 1 ? '' : 's'}), too many in a row to be chance.`;
    case 'regressed':
      return 'Newly failing: its latest builds failed after it had passed; too few yet to call it broken.';
    case 'passing':
      return 'Passing: it has not failed lately.';
    case 'no-runs':
      return 'No runs in the builds you may see.';
  }
}

/** What one piece of flaky evidence says. */
export function evidenceText(e: FlakyEvidence): string {
  switch (e.kind) {
    case 'retried':
      return 'Failed, then passed on a retry, in build';
    case 'same-commit':
      return `Failed and passed on commit ${e.commit.slice(0, 12)}:`;
    case 'intermittent':
      return `Failed now and then, in ${e.failedBuilds.length} builds with passes between:`;
  }
}

/** The axis maximum of a duration chart: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (!Number.isFinite(max) || max <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5]) if (m * p >= max) return m * p;
  return 10 * p;
}
