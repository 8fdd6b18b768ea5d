// Delivery for the capture agents that run on Node (Bazel files, npm): POST /api/builds (the
// ordinary ingest) with a short timeout; when the server cannot be reached or answers an error,
// the build goes to the spool every agent shares (spool.ts) and is sent after the next build that
// arrives, or by `buildscope agent flush`. The settings are every agent's (settings.ts). Build IDs
// are made by the agent, so a build that did arrive and is sent again is `unchanged`: nothing is
// lost, nothing is stored twice. Nothing here ever throws into the build.

import { redactStrings } from '../store/ingest/redact.js';
import { toIngestLine, type AgentBuild } from './common-build.js';
import type { Env } from './common-env.js';
import { agentSettingsOf } from './settings.js';
import { deliver, flushSpool, spoolBuild, type FlushResult } from './spool.js';

/** Spooled builds sent after a build that arrived, at most (the rest wait for the next one). */
export const FLUSH_AFTER_SEND = 50;

export interface AgentSettings {
  /** Server base URL without a trailing slash, or undefined when none is configured. */
  readonly server?: string;
  readonly accessKey?: string;
  readonly spoolDir: string;
  /** Per request; the build waits at most this long for the server. */
  readonly timeoutMs: number;
  /** Why the settings could not be read (the build is then spooled and this is said). */
  readonly problem?: string;
  /** Literal values removed from what is sent, besides the patterns (BUILDSCOPE_REDACT_VALUES, the access key). */
  readonly redactValues?: readonly string[];
  /** One line for the user that stops nothing (settings.ts configFileWarning). */
  readonly warning?: string;
}

/**
 * The agent's settings, as every agent reads them (settings.ts: environment variables, then
 * `agent.properties` in the agent directory), and `BUILDSCOPE_TIMEOUT_MS`.
 */
export function agentSettings(env: Env): AgentSettings {
  const timeout = Number(env['BUILDSCOPE_TIMEOUT_MS']);
  const s = agentSettingsOf(env);
  return {
    ...(s.server ? { server: s.server } : {}),
    ...(s.accessKey ? { accessKey: s.accessKey } : {}),
    spoolDir: s.spoolDir,
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 5000,
    redactValues: s.redactValues,
    ...(s.problem !== undefined ? { problem: s.problem } : {}),
    ...(s.warning !== undefined ? { warning: s.warning } : {}),
  };
}

export function buildLink(settings: AgentSettings, buildId: string): string | undefined {
  return settings.server === undefined ? undefined : `${settings.server}/builds/${buildId}`;
}

export type SendOutcome =
  | { readonly kind: 'sent'; readonly link: string; readonly flushed: number }
  | { readonly kind: 'spooled'; readonly reason: string; readonly link?: string }
  | { readonly kind: 'rejected'; readonly reason: string };

/**
 * The build as it may leave the machine (and be written to the spool): every string of its events
 * redacted (src/store/ingest/redact.ts: the shared patterns, the listed values and the access key).
 */
export function redactedBuild(build: AgentBuild, literals: readonly string[] = []): AgentBuild {
  return { ...build, events: build.events.map((e) => ({ ...e, data: redactStrings(e.data, literals) })) };
}

/** Sends this build, then (when it arrived) the spooled ones; spools it when it did not. Never throws. */
export async function sendBuild(settings: AgentSettings, build: AgentBuild): Promise<SendOutcome> {
  const link = buildLink(settings, build.buildId);
  try {
    const line = toIngestLine(redactedBuild(build, settings.redactValues));
    if (settings.server === undefined) {
      spoolBuild(settings.spoolDir, build.buildId, line);
      return { kind: 'spooled', reason: settings.problem ?? 'no server configured (set BUILDSCOPE_SERVER)' };
    }
    const target = { server: settings.server, accessKey: settings.accessKey };
    const outcome = await deliver(target, line, settings.timeoutMs);
    switch (outcome.kind) {
      case 'sent': {
        const flushed = await flushSpool(settings.spoolDir, target, { limit: FLUSH_AFTER_SEND, timeoutMs: settings.timeoutMs });
        return { kind: 'sent', link: link!, flushed: flushed.sent.length };
      }
      case 'rejected':
        return { kind: 'rejected', reason: outcome.reason };
      case 'failed':
        spoolBuild(settings.spoolDir, build.buildId, line);
        return { kind: 'spooled', reason: outcome.reason, ...(link ? { link } : {}) };
    }
  } catch (e) {
    return { kind: 'spooled', reason: `the build could not be spooled either: ${(e as Error).message}` };
  }
}

/**
 * The build as it is spooled and sent: its ingest line, redacted. Throws when it cannot be made;
 * `spoolRedacted` writes it to the spool, where a sender (sendSpooled, flush, the next build) finds it.
 */
export function spoolRedacted(settings: AgentSettings, build: AgentBuild): void {
  spoolBuild(settings.spoolDir, build.buildId, toIngestLine(redactedBuild(build, settings.redactValues)));
}

/**
 * A background sender's work: the spooled build `buildId` first, then up to FLUSH_AFTER_SEND
 * others; what cannot be sent stays in the spool (rejected builds move to `rejected/`). Never throws.
 */
export async function sendSpooled(settings: AgentSettings, buildId: string): Promise<FlushResult | undefined> {
  if (settings.server === undefined) return undefined;
  try {
    return await flushSpool(settings.spoolDir, { server: settings.server, accessKey: settings.accessKey }, { first: buildId, limit: FLUSH_AFTER_SEND + 1, timeoutMs: settings.timeoutMs, claimant: `send-${process.pid}` });
  } catch {
    return undefined;
  }
}

/** The one line an agent prints at the end of a build. */
export function outcomeLine(outcome: SendOutcome, spoolDir: string): string {
  switch (outcome.kind) {
    case 'sent':
      return `Buildscope: ${outcome.link}`;
    case 'spooled':
      return `Buildscope: build not sent (${outcome.reason}); kept in ${spoolDir}, sent with the next build${outcome.link ? ` as ${outcome.link}` : ''}`;
    case 'rejected':
      return `Buildscope: the server rejected the build: ${outcome.reason}`;
    default: {
      const never: never = outcome;
      return String(never);
    }
  }
}
