// The messages of the export API (seed 001): `Build` in its two versions and `BuildEvent`.
// A Build message's SSE id is the build ID; a BuildEvent's is its running number in the stream.

import type { BuildEvent, BuildEventText, BuildSummary } from '../store/types.js';

export type ApiVersion = 1 | 2;

export interface BuildDataV2 {
  readonly buildId: string;
  readonly timestamp: number;
  readonly toolType: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
}

export interface BuildDataV1 {
  readonly buildId: string;
  readonly timestamp: number;
  readonly nativeVersion: string;
  readonly pluginVersion: string;
}

/** Builds a v1 stream may show: v1 predates every tool but the first-party one. */
export const V1_TOOL_TYPE = 'native';

export function buildData(version: ApiVersion, build: BuildSummary): BuildDataV1 | BuildDataV2 {
  switch (version) {
    case 1:
      return { buildId: build.id, timestamp: build.availableAt, nativeVersion: build.toolVersion, pluginVersion: build.agentVersion };
    case 2:
      return {
        buildId: build.id,
        timestamp: build.availableAt,
        toolType: build.toolType,
        toolVersion: build.toolVersion,
        agentVersion: build.agentVersion,
      };
  }
}

// The two hot paths frame directly: JSON.stringify never emits a raw line break, and build IDs are
// [0-9a-z]{13} (checked at ingest), so formatMessage's line-break checks cannot fail here.
// framing.test.ts checks that both agree with formatMessage.

export function buildMessage(version: ApiVersion, build: BuildSummary): string {
  return `id: ${build.id}\nevent: Build\ndata: ${JSON.stringify(buildData(version, build))}\n\n`;
}

/** `sequence` is the event's running number in this stream (1, 2, ...), after any eventTypes filter. */
export function buildEventMessage(sequence: number, event: BuildEvent): string {
  // Field order as the seed lists it; `data` defaults to {} so that every message has all three.
  const data = JSON.stringify({ timestamp: event.timestamp, type: event.type, data: event.data ?? {} });
  return `id: ${sequence}\nevent: BuildEvent\ndata: ${data}\n\n`;
}

/**
 * buildEventMessage of an event read as text (BuildStore.streamEventTexts): the same bytes, without
 * decoding and encoding the event's data again (its text is what JSON.stringify makes, with no raw
 * line break).
 */
export function buildEventTextMessage(sequence: number, event: BuildEventText): string {
  return `id: ${sequence}\nevent: BuildEvent\ndata: ${event.json}\n\n`;
}
