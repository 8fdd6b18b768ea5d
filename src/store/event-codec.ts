// How events are stored: each chunk is a JSON array of compact tuples
// `[timestamp, eventType, majorVersion, minorVersion, data]`, about half the size of the ingest
// form (the repeated `"type":{...}` keys dominate a build's bytes), which matters because the
// event bytes are most of what ingest writes.

import { canonicalJson } from './canonical.js';
import type { BuildEvent } from './types.js';

type Tuple = [number, string, number, number, Readonly<Record<string, unknown>>];

export function encodeEvents(events: readonly BuildEvent[]): string {
  const tuples = new Array<Tuple>(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    tuples[i] = [e.timestamp, e.type.eventType, e.type.majorVersion, e.type.minorVersion, e.data];
  }
  return JSON.stringify(tuples);
}

function fromTuple(tuple: Tuple): BuildEvent {
  const [timestamp, eventType, majorVersion, minorVersion, data] = tuple;
  return { timestamp, type: { majorVersion, minorVersion, eventType }, data };
}

export function decodeEvents(json: string): BuildEvent[] {
  const tuples = JSON.parse(json) as Tuple[];
  const out = new Array<BuildEvent>(tuples.length);
  for (let i = 0; i < tuples.length; i++) out[i] = fromTuple(tuples[i]!);
  return out;
}

/** One element of a stored chunk (see event-splitter.ts, which finds them). */
export function decodeEvent(tupleJson: string): BuildEvent {
  return fromTuple(JSON.parse(tupleJson) as Tuple);
}

/** The encoded events with every object's keys sorted: equal iff the events mean the same. */
export function canonicalEvents(json: string): string {
  return canonicalJson(JSON.parse(json));
}
