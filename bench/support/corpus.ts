// The analytics corpus: the queries whose count, facets, 30-day trends and first pages the issue
// "Analytics for any query at a million builds" sets goals for, the six of its first measurements
// and more. Timed through the store by analytics-corpus.ts and over HTTP by corpus-http.ts.

export const CORPUS = [
  'tag:CI',
  '-user:bot',
  'requested:*test*',
  'buildTool:native',
  'project:inv*',
  'buildOutcome:failed or tag:CI',
  // Negations, an infix, a custom value, a time range and three-term mixes.
  '-tag:local -buildOutcome:failed',
  'user:*ar*',
  'value:"Git branch=main"',
  'buildStartTime:[2026-10-01 to 2026-10-31]',
  'project:billing user:farah tag:release',
  'buildTool:native buildDuration>2m -tag:ci',
] as const;
