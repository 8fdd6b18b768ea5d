// The spool: builds an agent could not deliver, one file per build, named <buildId>.ndjson and
// holding its one NDJSON ingest line. Every agent (Gradle, Maven, Bazel files, npm, pytest) writes
// it the same way (a temporary file renamed
// into place, so a reader never sees half a build) and sends it the same way: a file is claimed
// by renaming it to <name>.sending.<claimant> before it is posted, so two senders (two builds
// ending at once, or a build and `buildscope agent flush`) never post it twice; it is deleted once
// the server has stored it (or already had it: build IDs are made by the agent, and the server
// treats the same build sent again as a no-op). A build the server rejects will never be taken
// and moves to rejected/; any other fault puts the file back for the next try.

import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentContract, buildIdSource } from './contract.js';

// File names by the build ID of the agent contract (agents/agent-contract.json).
const ID = buildIdSource();
const ID_LENGTH = agentContract().buildId.length;
export const SPOOL_FILE = new RegExp(`^${ID}\\.ndjson$`);
const LEGACY_SPOOL_FILE = new RegExp(`^${ID}\\.json$`);
const CLAIMED_FILE = new RegExp(`^(${ID}\\.ndjson)\\.sending\\.`);
const BUILD_ID = new RegExp(`^${ID}$`);
/** A claim older than this (by ctime, which the claiming rename sets) was left by a sender that died; it is taken back. */
const STALE_CLAIM_MS = 10 * 60_000;

export type Delivery =
  | { readonly kind: 'sent'; readonly status: 'stored' | 'unchanged' }
  | { readonly kind: 'rejected'; readonly reason: string }
  | { readonly kind: 'failed'; readonly reason: string };

export interface Target {
  readonly server: string;
  readonly accessKey: string | undefined;
}

/** POSTs one build line to the server's ingest and says what became of it. */
export async function deliver(target: Target, line: string, timeoutMs = 15_000): Promise<Delivery> {
  let response: Response;
  try {
    response = await fetch(`${target.server}/api/builds`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', ...(target.accessKey ? { authorization: `Bearer ${target.accessKey}` } : {}) },
      body: line.trimEnd() + '\n',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') return { kind: 'failed', reason: `the server did not answer within ${timeoutMs} ms` };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'failed', reason: cause?.code ?? cause?.message ?? (e as Error).message };
  }
  const text = await response.text().catch(() => '');
  if (response.status !== 200) {
    let detail = '';
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? '';
    } catch {
      // not a problem document
    }
    return { kind: 'failed', reason: `HTTP ${response.status}${detail ? `: ${detail}` : ''}` };
  }
  try {
    const body = JSON.parse(text) as { results?: { status: string; path?: string; error?: string }[] };
    const r = body.results?.[0];
    if (r === undefined) return { kind: 'failed', reason: 'the server answered no result' };
    if (r.status === 'stored' || r.status === 'unchanged') return { kind: 'sent', status: r.status };
    return { kind: 'rejected', reason: `${r.path ?? ''}: ${r.error ?? 'rejected'}` };
  } catch {
    return { kind: 'failed', reason: 'the server answered something other than JSON' };
  }
}

/**
 * A directory only its owner may enter (0700), made if missing: spooled builds hold what a build
 * said (names, messages), so other users of the machine must not read them whatever the umask.
 * A directory that exists is tightened too (an agent before this rule made it 0755). Exported for
 * the agent directory, which other agents' files share.
 */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  try {
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch {
    // not ours to change (a shared spool set up by an administrator): the files stay 0600
  }
}

/** Writes a build into the spool (atomically), readable by its owner only (0600). */
export function spoolBuild(spoolDir: string, buildId: string, line: string): string {
  if (!BUILD_ID.test(buildId)) throw new Error(`not an agent build ID: '${buildId}'`);
  privateDir(spoolDir);
  const file = join(spoolDir, `${buildId}.ndjson`);
  const tmp = `${file}.tmp`;
  rmSync(tmp, { force: true }); // a leftover of a crash keeps its mode; writeFileSync's mode only applies to a new file
  writeFileSync(tmp, line.trimEnd() + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

export interface FlushResult {
  readonly sent: readonly string[];
  readonly rejected: readonly { readonly buildId: string; readonly reason: string }[];
  /** Left in the spool: the server could not be reached or answered an error. */
  readonly kept: number;
  readonly failure: string | undefined;
}

/** The build IDs waiting in the spool (claimed ones included). */
export function spooled(spoolDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(spoolDir);
  } catch {
    return [];
  }
  return names.filter((n) => SPOOL_FILE.test(n) || LEGACY_SPOOL_FILE.test(n) || CLAIMED_FILE.test(n)).map((n) => n.slice(0, ID_LENGTH)).sort();
}

export interface FlushOptions {
  /** Who claims the files (part of the claim's name). */
  readonly claimant?: string;
  /** At most this many builds (oldest name first); all by default. */
  readonly limit?: number;
  /** Per request. */
  readonly timeoutMs?: number;
  /** This build first (when it is in the spool), then the others by name. */
  readonly first?: string;
}

/** Sends the spooled builds; stops at the first failure to reach the server (the rest stay). */
export async function flushSpool(spoolDir: string, target: Target, options: FlushOptions = {}): Promise<FlushResult> {
  const claimant = options.claimant ?? `flush-${process.pid}`;
  const sent: string[] = [];
  const rejected: { buildId: string; reason: string }[] = [];
  let failure: string | undefined;
  reclaimStale(spoolDir);
  const waiting = spooled(spoolDir);
  const ordered = options.first !== undefined && waiting.includes(options.first) ? [options.first, ...waiting.filter((id) => id !== options.first)] : waiting;
  const files = ordered
    .slice(0, options.limit)
    .map((id) => `${id}.ndjson`);
  for (const name of files) {
    const file = join(spoolDir, name);
    const claimed = `${file}.sending.${claimant}`;
    try {
      renameSync(file, claimed);
    } catch {
      continue; // another sender has it, or it is gone
    }
    const outcome = await deliver(target, readFileSync(claimed, 'utf8'), options.timeoutMs);
    switch (outcome.kind) {
      case 'sent':
        rmSync(claimed, { force: true });
        sent.push(name.slice(0, ID_LENGTH));
        break;
      case 'rejected':
        privateDir(join(spoolDir, 'rejected'));
        renameSync(claimed, join(spoolDir, 'rejected', name));
        rejected.push({ buildId: name.slice(0, ID_LENGTH), reason: outcome.reason });
        break;
      case 'failed':
        renameSync(claimed, file);
        failure = outcome.reason;
        break;
    }
    if (failure !== undefined) break;
  }
  return { sent, rejected, kept: spooled(spoolDir).length, failure };
}

/**
 * Takes back claims left by senders that died, and renames `<id>.json`, the spool files of agents
 * before all of them shared this spool, to `<id>.ndjson` (the same one ingest line).
 */
function reclaimStale(spoolDir: string): void {
  let names: string[];
  try {
    names = readdirSync(spoolDir);
  } catch {
    return;
  }
  for (const n of names) {
    if (LEGACY_SPOOL_FILE.test(n)) {
      try {
        renameSync(join(spoolDir, n), join(spoolDir, `${n.slice(0, ID_LENGTH)}.ndjson`));
      } catch {
        // taken by someone else meanwhile
      }
      continue;
    }
    const m = CLAIMED_FILE.exec(n);
    if (m === null) continue;
    try {
      if (Date.now() - statSync(join(spoolDir, n)).ctimeMs > STALE_CLAIM_MS) renameSync(join(spoolDir, n), join(spoolDir, m[1]!));
    } catch {
      // taken by someone else meanwhile
    }
  }
}
