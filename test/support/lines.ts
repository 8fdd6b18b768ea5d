// Ingest lines (one build per NDJSON line, the event model of the spec) for every test: the event
// envelope, the line around a build's events, and a whole build from a few settings.

export interface BuildEvent {
  readonly timestamp: number;
  readonly type: { readonly majorVersion: number; readonly minorVersion: number; readonly eventType: string };
  readonly data: Record<string, unknown>;
}

/** A build event of version 1.0 of `eventType`. */
export function event(timestamp: number, eventType: string, data: Record<string, unknown> = {}): BuildEvent {
  return { timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data };
}

/** An event as [timestamp, eventType, data]. */
export type EventTuple = readonly [number, string, Record<string, unknown>];

export interface LineHeader {
  readonly toolType?: string;
  readonly toolVersion?: string;
  readonly agentVersion?: string;
}

/**
 * One ingest line: the build's ID (left out when undefined), tool and agent (native 8.10.2, agent
 * 3.19 unless given) and its events, as events or [timestamp, eventType, data] tuples.
 */
export function ingestLine(buildId: string | undefined, events: readonly (BuildEvent | EventTuple)[], header: LineHeader = {}): string {
  return JSON.stringify({
    buildId,
    toolType: header.toolType ?? 'native',
    toolVersion: header.toolVersion ?? '8.10.2',
    agentVersion: header.agentVersion ?? '3.19',
    events: events.map((e) => (Array.isArray(e) ? event(e[0], e[1], e[2]) : (e as BuildEvent))),
  });
}

export interface BuildSpec {
  readonly id: string;
  /** toolType; native by default. */
  readonly tool?: string;
  readonly toolVersion?: string;
  readonly agentVersion?: string;
  /** rootProjectName of a ProjectStructure event; none by default. */
  readonly project?: string;
  readonly outcome?: 'succeeded' | 'failed';
  readonly tags?: readonly string[];
  /** UserNamedValue events, in order. */
  readonly values?: Readonly<Record<string, string>>;
  /** BuildStarted's timestamp; 1_749_000_000_000 by default. */
  readonly start?: number;
  /** BuildAgent's user name; ci by default. */
  readonly user?: string;
  /** BuildAgent's public host name; agent-1.example.com by default. */
  readonly hostname?: string;
  /** BuildAgent's local host name; none by default. */
  readonly localHostname?: string;
  /** false: no BuildFinished, the build stays open for more events. */
  readonly finished?: boolean;
}

/**
 * A whole build: BuildStarted at `start`, BuildAgent at +1, ProjectStructure at +2, the named
 * values from +3 on, the tags from +50 on, BuildFinished at +60 s.
 */
export function buildLine(b: BuildSpec): string {
  const start = b.start ?? 1_749_000_000_000;
  const agent: Record<string, unknown> = { username: b.user ?? 'ci', publicHostname: b.hostname ?? 'agent-1.example.com' };
  if (b.localHostname !== undefined) agent['localHostname'] = b.localHostname;
  const events = [event(start, 'BuildStarted'), event(start + 1, 'BuildAgent', agent)];
  if (b.project !== undefined) events.push(event(start + 2, 'ProjectStructure', { rootProjectName: b.project }));
  Object.entries(b.values ?? {}).forEach(([key, value], i) => events.push(event(start + 3 + i, 'UserNamedValue', { key, value })));
  (b.tags ?? []).forEach((tag, i) => events.push(event(start + 50 + i, 'UserTag', { tag })));
  if (b.finished !== false) events.push(event(start + 60_000, 'BuildFinished', { outcome: b.outcome ?? 'succeeded', failures: [] }));
  return ingestLine(b.id, events, { toolType: b.tool ?? 'native', toolVersion: b.toolVersion ?? '8.10.2', agentVersion: b.agentVersion ?? '3.19' });
}

/** A 13-character build ID from a number. */
export function buildId(n: number): string {
  return `b${n.toString(36).padStart(12, '0')}`;
}
