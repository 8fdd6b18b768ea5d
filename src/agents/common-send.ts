// Delivery for every capture agent: POST /api/builds (the ordinary ingest) with a short timeout;
// when the server cannot be reached or answers an error, the build is written to a local spool
// directory and sent with the next build (or `buildscope agent flush`). Build IDs are made by the
// agent, so a build that did arrive and is sent again is `unchanged`: nothing is lost, nothing
// is stored twice. Nothing here ever throws into the build.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { toIngestLine, type AgentBuild } from './common-build.js';
import type { Env } from './common-env.js';

export interface AgentSettings {
  /** Server base URL without a trailing slash, or undefined when none is configured. */
  readonly server?: string;
  readonly accessKey?: string;
  readonly spoolDir: string;
  /** Per request; the build waits at most this long for the server. */
  readonly timeoutMs: number;
}

/**
 * The agent's settings: environment variables (`BUILDSCOPE_SERVER`, `BUILDSCOPE_ACCESS_KEY`,
 * `BUILDSCOPE_SPOOL_DIR`, `BUILDSCOPE_TIMEOUT_MS`) win over the agent's own file
 * (`BUILDSCOPE_AGENT_CONFIG`, default `~/.buildscope/agent.json`: `{"server", "accessKey"}`).
 */
export function agentSettings(env: Env): AgentSettings {
  const home = env['HOME'] || homedir();
  const file = env['BUILDSCOPE_AGENT_CONFIG'] || join(home, '.buildscope', 'agent.json');
  let fromFile: { server?: unknown; accessKey?: unknown } = {};
  try {
    fromFile = JSON.parse(readFileSync(file, 'utf8')) as typeof fromFile;
  } catch {
    // No file, or not JSON: the environment alone decides.
  }
  const server = env['BUILDSCOPE_SERVER'] || (typeof fromFile.server === 'string' ? fromFile.server : undefined);
  const accessKey = env['BUILDSCOPE_ACCESS_KEY'] || (typeof fromFile.accessKey === 'string' ? fromFile.accessKey : undefined);
  const timeout = Number(env['BUILDSCOPE_TIMEOUT_MS']);
  return {
    ...(server ? { server: server.replace(/\/+$/, '') } : {}),
    ...(accessKey ? { accessKey } : {}),
    spoolDir: env['BUILDSCOPE_SPOOL_DIR'] || join(home, '.buildscope', 'spool'),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 5000,
  };
}

export function buildLink(settings: AgentSettings, buildId: string): string | undefined {
  return settings.server === undefined ? undefined : `${settings.server}/builds/${buildId}`;
}

export type SendOutcome =
  | { readonly kind: 'sent'; readonly link: string; readonly flushed: number }
  | { readonly kind: 'spooled'; readonly reason: string; readonly link?: string }
  | { readonly kind: 'rejected'; readonly reason: string };

interface LineResult {
  readonly status: 'stored' | 'unchanged' | 'rejected';
  readonly buildId?: string;
  readonly error?: string;
}

/** POSTs NDJSON lines; resolves with each line's result, or throws with a reason. */
async function post(settings: AgentSettings, lines: readonly string[]): Promise<LineResult[]> {
  const response = await fetch(`${settings.server}/api/builds`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-ndjson',
      ...(settings.accessKey ? { authorization: `Bearer ${settings.accessKey}` } : {}),
    },
    body: lines.join('\n') + '\n',
    signal: AbortSignal.timeout(settings.timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) {
    let detail = text.slice(0, 300);
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? detail;
    } catch {
      // Not a problem document: keep the text.
    }
    throw new Error(`the server answered ${response.status}: ${detail}`);
  }
  return (JSON.parse(text) as { results: LineResult[] }).results;
}

/** Writes a build to the spool (atomically: a reader never sees half a file). */
export function spool(settings: AgentSettings, build: AgentBuild): void {
  mkdirSync(settings.spoolDir, { recursive: true });
  const file = join(settings.spoolDir, `${build.buildId}.json`);
  writeFileSync(`${file}.tmp`, toIngestLine(build));
  renameSync(`${file}.tmp`, file);
}

export interface FlushResult {
  readonly sent: number;
  readonly rejected: number;
  readonly left: number;
  readonly error?: string;
}

/** Sends every spooled build in one request; removes those the server has (rejected ones go to `rejected/`). */
export async function flushSpool(settings: AgentSettings): Promise<FlushResult> {
  let files: string[];
  try {
    files = readdirSync(settings.spoolDir).filter((f) => /^[0-9a-z]{13}\.json$/.test(f)).sort();
  } catch {
    return { sent: 0, rejected: 0, left: 0 };
  }
  if (files.length === 0) return { sent: 0, rejected: 0, left: 0 };
  if (settings.server === undefined) return { sent: 0, rejected: 0, left: files.length, error: 'no server configured (BUILDSCOPE_SERVER)' };
  const lines = files.map((f) => readFileSync(join(settings.spoolDir, f), 'utf8').trim());
  let results: LineResult[];
  try {
    results = await post(settings, lines);
  } catch (e) {
    return { sent: 0, rejected: 0, left: files.length, error: reason(e) };
  }
  let sent = 0;
  let rejected = 0;
  results.forEach((r, i) => {
    const file = join(settings.spoolDir, files[i]!);
    if (r.status === 'rejected') {
      rejected++;
      mkdirSync(join(settings.spoolDir, 'rejected'), { recursive: true });
      renameSync(file, join(settings.spoolDir, 'rejected', files[i]!));
    } else {
      sent++;
      rmSync(file, { force: true });
    }
  });
  return { sent, rejected, left: files.length - sent - rejected };
}

/** Sends the spool, then this build; spools it when that fails. Never throws. */
export async function sendBuild(settings: AgentSettings, build: AgentBuild): Promise<SendOutcome> {
  const link = buildLink(settings, build.buildId);
  try {
    if (settings.server === undefined) {
      spool(settings, build);
      return { kind: 'spooled', reason: 'no server configured (set BUILDSCOPE_SERVER)' };
    }
    const flushed = await flushSpool(settings);
    let results: LineResult[];
    try {
      results = await post(settings, [toIngestLine(build)]);
    } catch (e) {
      spool(settings, build);
      return { kind: 'spooled', reason: reason(e), ...(link ? { link } : {}) };
    }
    const r = results[0];
    if (r?.status === 'rejected') return { kind: 'rejected', reason: r.error ?? 'rejected' };
    return { kind: 'sent', link: link!, flushed: flushed.sent };
  } catch (e) {
    return { kind: 'spooled', reason: `the build could not be spooled either: ${reason(e)}` };
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

function reason(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return 'the server did not answer in time';
  return err.cause?.code ? `${err.message} (${err.cause.code})` : err.message;
}
