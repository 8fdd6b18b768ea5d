// The data of a build's last event of a type. A build page and a build's facts ask for several
// types (BuildFinished, Environment, BuildOptions, ...) of builds that hold tens of thousands of
// task and test events, so the events are indexed once instead of scanned once per type.

import type { BuildEvent } from '../store/types.js';

export type EventData = Readonly<Record<string, unknown>>;

/** A lookup of the last event of each type's data (undefined for a type the build has not sent). */
export function lastDataOf(events: readonly BuildEvent[]): (type: string) => EventData | undefined {
  const last = new Map<string, EventData>();
  for (const e of events) last.set(e.type.eventType, e.data);
  return (type) => last.get(type);
}
