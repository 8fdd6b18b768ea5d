// The answers of the /api routes the web app calls, as the browser receives them: the one module
// of the server the web app imports, with `import type` only, so nothing of the server reaches its
// bundle (.dependency-cruiser.cjs, `web-uses-the-library`). Each type is defined once, where the
// answer is made (the list row from the schema its route answers with, list-row.ts); this module
// gathers them.

export type { ListPage, ListRow } from './list-row.js';
export type { BuildDetails, EventsPage, Failure } from './web.js';
export type { ConsolePage, TestFilter } from './build-report.js';
export type { BuildTestRow, BuildTestsPage } from './build-tests.js';
export type { BuildSide, Comparison, Difference, DifferenceKind, FieldGroup, InputChange, Scalar, Section, SectionId, SummaryEntry } from './comparison.js';
export type { FailureGroupPage, TestHistory, TestsOverview, TestSummary } from './tests.js';
export type { Estimate, FlakyEvidence, Verdict, VerdictKind } from './test-verdicts.js';
export type { FacetValue, Facets, TaskStat, TrendBucket, Trends } from '../store/analytics/analytics.js';
export type { FailureGroupBuildRow, FailureGroupRow, FailureGroupTestRow, TestRunRow } from '../store/types.js';
export type { TaskRow } from '../store/events/tasks.js';
