// What the web pages show, as library functions over the store: a page of the builds list, the
// description of one build (read from its events), a page of its raw events. The HTTP routes of
// src/http/web-plugin.ts are thin wrappers; counts, facets and trends are src/store/analytics/analytics.ts.

import { withTestIds, type BuildTestRow } from './build-tests.js';
import { lastDataOf } from './last-data.js';
import type { CheckedExpr } from '../query/checked.js';
import { tasksOf, type TaskRow } from '../store/events/tasks.js';
import { buildReport, plainText, type ConsoleSummary, type TestCounts } from './build-report.js';
import { causeOf, withConsoleCauses, type FailureCause } from './failure-cause.js';
import type { AttributeValue, BuildAttestation, BuildEvent, BuildStore, BuildWithAttributes, Visibility } from '../store/types.js';
import type { ListPage, ListRow } from './list-row.js';

// The list row and page are written once, as the route's schema (list-row.ts).
export type { ListPage, ListRow };

export const MAX_PAGE_SIZE = 200;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export function listRow(b: BuildWithAttributes): ListRow {
  const a = b.attributes;
  return {
    id: b.id,
    outcome: str(a['buildOutcome']),
    tool: b.toolType,
    toolVersion: b.toolVersion,
    project: b.project,
    requested: strs(a['requested']),
    user: str(a['user']),
    host: str(a['hostname']),
    start: num(a['buildStartTime']),
    duration: num(a['buildDuration']),
    tags: strs(a['tag']),
  };
}

/**
 * A page of the builds the query matches, newest first. Keyset pagination: `after` is the last
 * build of the previous page, so a page is an index range whatever its depth, and builds arriving
 * meanwhile do not shift the pages.
 */
export async function listPage(store: BuildStore, options: { query: CheckedExpr; visibility: Visibility; after?: string; limit: number }): Promise<ListPage> {
  const limit = Math.max(1, Math.min(MAX_PAGE_SIZE, Math.floor(options.limit)));
  const rows = (await store.listBuilds({
    query: options.query,
    visibility: options.visibility,
    reverse: true,
    withAttributes: true,
    maxBuilds: limit + 1,
    ...(options.after !== undefined ? { fromBuild: options.after } : {}),
  })) as BuildWithAttributes[];
  const page = rows.slice(0, limit);
  return { builds: page.map(listRow), next: rows.length > limit ? page[page.length - 1]!.id : null };
}

export interface Failure {
  readonly classification: string;
  readonly message: string;
  /** Why: the exception, a compiler's diagnostics, a failed command's output tail; null when the agent sent none. */
  readonly cause: FailureCause | null;
}

/** The failed tests the page shows first (the rest through GET /api/builds/{id}/tests). */
export const FAILED_TESTS_IN_DETAILS = 20;

/** Everything the build page shows, from the build's attributes and events. */
export interface BuildDetails extends ListRow {
  readonly agentVersion: string;
  readonly availableAt: number;
  readonly excluded: readonly string[];
  readonly failures: readonly Failure[];
  /** Every finished task, in the order they finished (start offsets from the build's start). */
  readonly tasks: readonly TaskRow[];
  readonly environment: Readonly<Record<string, unknown>>;
  readonly options: Readonly<Record<string, unknown>>;
  readonly cache: Readonly<Record<string, unknown>> | null;
  readonly serverSettings: Readonly<Record<string, unknown>>;
  readonly configurationCache: string | null;
  readonly values: readonly { readonly name: string; readonly value: string }[];
  /** How many events of each type the build has. */
  readonly eventTypes: Readonly<Record<string, number>>;
  readonly attributes: Readonly<Record<string, AttributeValue | readonly unknown[] | undefined>>;
  /** The attestations the provenance service made from the build, oldest first. */
  readonly attestations: readonly BuildAttestation[];
  /** The build's tests counted by outcome, and the first failed ones with their failures. */
  readonly tests: { readonly counts: TestCounts; readonly failed: readonly BuildTestRow[] };
  /** The console log's size, whether it was cut, and its first error line (its lines: GET /api/builds/{id}/console). */
  readonly console: ConsoleSummary;
}

/** The build page's content, or undefined when the build is not available to the caller. */
export async function buildDetails(store: BuildStore, id: string, visibility: Visibility): Promise<BuildDetails | undefined> {
  const build = await store.getBuild(id, visibility);
  if (build === undefined) return undefined;
  const events = await store.readEvents(id);
  const lastData = lastDataOf(events);
  const eventTypes: Record<string, number> = {};
  for (const e of events) eventTypes[e.type.eventType] = (eventTypes[e.type.eventType] ?? 0) + 1;
  const finished = lastData('BuildFinished');
  const sent = Array.isArray(finished?.['failures'])
    ? (finished['failures'] as unknown[]).flatMap((f) => {
        if (typeof f !== 'object' || f === null) return [];
        const r = f as Record<string, unknown>;
        return [{ classification: str(r['classification']) ?? 'unknown', message: str(r['message']) ?? '', cause: causeOf(r['cause']) }];
      })
    : [];
  const values = Array.isArray(build.attributes['value']) ? (build.attributes['value'] as { name: string; value: string }[]) : [];
  const report = await buildReport(store, build, num(build.attributes['buildStartTime']), events);
  const failures = withConsoleCauses(sent, () => report.consoleLines.map(plainText));
  return {
    ...listRow(build),
    agentVersion: build.agentVersion,
    availableAt: build.availableAt,
    excluded: strs(lastData('BuildRequestedTasks')?.['excluded']),
    failures,
    tasks: tasksOf(events),
    environment: lastData('Environment') ?? {},
    options: lastData('BuildOptions') ?? {},
    cache: lastData('BuildCache') ?? null,
    serverSettings: lastData('ServerSettings') ?? {},
    configurationCache: str(lastData('ConfigurationCache')?.['outcome']),
    values,
    eventTypes,
    attributes: build.attributes,
    attestations: await store.attestationsOf(id),
    tests: { counts: report.counts, failed: await withTestIds(store, build, visibility, report.tests.filter((t) => t.outcome === 'failed').slice(0, FAILED_TESTS_IN_DETAILS)) },
    console: report.console,
  };
}

export interface EventsPage {
  readonly events: readonly BuildEvent[];
  readonly offset: number;
  /** How many events (of the requested types) the build has. */
  readonly total: number;
}

/** Events `offset` .. `offset + limit` of a build, optionally only those of the given types. */
export async function eventsPage(store: BuildStore, id: string, options: { types?: readonly string[]; offset: number; limit: number }): Promise<EventsPage> {
  const events: BuildEvent[] = [];
  let total = 0;
  const types = options.types !== undefined && options.types.length > 0 ? options.types : undefined;
  for await (const e of store.streamEvents(id, types ? { eventTypes: types } : {})) {
    if (total >= options.offset && events.length < options.limit) events.push(e);
    total++;
  }
  return { events, offset: options.offset, total };
}
