// What the agents learn about where a build runs: the agent host (with redaction on request), the
// CI provider and job, and the git checkout. The tag and value names are the ones users know from
// the open common-custom-user-data plugin (`CI`/`LOCAL`, `CI provider`, `Git branch`, ...).
// Environment variables are read to recognise a CI, never sent. The names, the CI providers and
// the settings they come from are agents/agent-contract.json's (contract.ts).

import { execFile, execFileSync } from 'node:child_process';
import { hostname, networkInterfaces, userInfo } from 'node:os';
import type { BuildEvent } from '../store/types.js';
import { event } from './common-build.js';
import { agentContract, fieldsLeftOut, type AgentContext, type Env } from './contract.js';

export type { Env } from './contract.js';

/** `BuildAgent` data: user, host names and local IP addresses, each left out when its redaction word is given (contract.ts). */
export function buildAgentData(redact: readonly string[], known: { user?: string; host?: string } = {}): Record<string, unknown> {
  const out = fieldsLeftOut(redact);
  const data: Record<string, unknown> = {};
  const user = out.has('username') ? undefined : (known.user ?? safe(() => userInfo().username));
  if (user) data['username'] = user;
  const host = out.has('publicHostname') ? undefined : (known.host ?? safe(() => hostname()));
  if (host) {
    data['publicHostname'] = host;
    data['localHostname'] = host;
  }
  if (!out.has('localIpAddresses') && known.host === undefined) {
    const addresses = Object.values(safe(() => networkInterfaces()) ?? {})
      .flat()
      .filter((a) => a !== undefined && !a.internal)
      .map((a) => a!.address);
    if (addresses.length > 0) data['localIpAddresses'] = addresses;
  }
  return data;
}

export interface GitInfo {
  readonly repository?: string;
  readonly commit?: string;
  readonly branch?: string;
  /** Whether the checkout has changes (`git status --porcelain` says any). */
  readonly dirty: boolean;
}

const GIT_STATUS = ['status', '--porcelain=v2', '--branch'];
const GIT_REMOTE = ['config', '--get', 'remote.origin.url'];

/** The git checkout at `cwd` (undefined outside one or without git). Bounded in time: never slows a build much. */
export function gitInfo(cwd: string, ciBranch?: string): GitInfo | undefined {
  const git = (args: readonly string[]): string | undefined =>
    safe(() => execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd());
  // One call gives commit, branch and changes (porcelain v2 headers); a second the remote.
  const status = git(GIT_STATUS);
  return status === undefined ? undefined : gitInfoOf(status, () => git(GIT_REMOTE), ciBranch);
}

/**
 * gitInfo without blocking: the same two calls of git, run beside whatever the caller does (the
 * command `buildscope run` wraps), so that reading the checkout adds nothing to the wall time.
 */
export async function gitInfoAsync(cwd: string, ciBranch?: string): Promise<GitInfo | undefined> {
  const git = (args: readonly string[]) =>
    new Promise<string | undefined>((resolve) => {
      try {
        execFile('git', args, { cwd, encoding: 'utf8', timeout: 2000 }, (error, stdout) => resolve(error ? undefined : stdout.trimEnd()));
      } catch {
        resolve(undefined);
      }
    });
  const [status, remote] = await Promise.all([git(GIT_STATUS), git(GIT_REMOTE)]);
  return status === undefined ? undefined : gitInfoOf(status, () => remote, ciBranch);
}

function gitInfoOf(status: string, remoteOf: () => string | undefined, ciBranch: string | undefined): GitInfo | undefined {
  let commit: string | undefined;
  let branch: string | undefined;
  const changes: string[] = [];
  for (const line of status.split('\n')) {
    if (line.startsWith('# branch.oid ')) commit = line.slice('# branch.oid '.length);
    else if (line.startsWith('# branch.head ')) branch = line.slice('# branch.head '.length);
    else if (line !== '' && !line.startsWith('#')) changes.push(line);
  }
  if (commit === undefined || commit === '(initial)') return undefined;
  // CI checkouts are often detached; the providers name the branch (agent-contract.json).
  if (branch === undefined || branch === '(detached)') branch = ciBranch;
  const remote = remoteOf()?.trim();
  return {
    commit,
    ...(branch ? { branch } : {}),
    ...(remote ? { repository: withoutUserInfo(remote) } : {}),
    dirty: changes.length > 0,
  };
}

/**
 * A git remote without credentials. URL-style (`scheme://...`): everything before the last '@' of
 * the authority goes (`https://user:token@host/x` -> `https://host/x`). The authority is taken by
 * hand, not by a URL parser, because the remotes that matter are the malformed ones a parser
 * refuses or splits early: a password with a raw '@', '/', '?' or '#'. When the first '@' comes
 * after the first '/' and what precedes that '/' is no host[:port] (`ci:pa/ss@host/x`), the '/' is
 * part of a password and the user info runs to the last '@' before the next '/'. scp-like
 * (`user@host:path`): the user stays (`git@github.com:org/x.git` names no secret), a password goes.
 * The Gradle, Maven and pytest agents implement the same rule (test/agents/fixtures/git-remote-cases.json).
 */
export function withoutUserInfo(remote: string): string {
  const url = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)(.*)$/s.exec(remote);
  if (url === null) {
    const scp = /^(.*)@([^@/:[\]]+|\[[^\]]*\]):(.*)$/s.exec(remote);
    if (scp === null) return remote;
    const colon = scp[1]!.indexOf(':');
    return colon < 0 ? remote : `${scp[1]!.slice(0, colon)}@${scp[2]}:${scp[3]}`;
  }
  const [, scheme, rest] = url as unknown as [string, string, string];
  const firstAt = rest.indexOf('@');
  if (firstAt < 0) return remote;
  const slash = rest.indexOf('/');
  const authorityEnd = slash < 0 ? rest.length : slash;
  if (firstAt > authorityEnd && HOST_PORT.test(rest.slice(0, authorityEnd))) return remote; // an '@' of the path
  const segmentEnd = rest.indexOf('/', firstAt);
  const lastAt = rest.lastIndexOf('@', segmentEnd < 0 ? rest.length : segmentEnd);
  return scheme + rest.slice(lastAt + 1);
}

/** A URL authority without user info: a host name or [IPv6 address], and an optional port. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]*\]|[^:@[\]]*)(:[0-9]*)?$/;

/**
 * `UserTag` and `UserNamedValue` events: CI (or LOCAL), the OS, git, and the user's own tags and
 * values, with the contract's names (agents/agent-contract.json).
 */
export function contextEvents(context: AgentContext, cwd: string, at: number, options: { git?: boolean; knownGit?: { readonly info: GitInfo | undefined } } = {}): BuildEvent[] {
  const c = agentContract();
  const events: BuildEvent[] = [];
  const tag = (t: string) => events.push(event('UserTag', { tag: t }, at));
  const value = (key: string, v: string) => events.push(event('UserNamedValue', { key, value: v }, at));
  const [ciTag, osName, ...userTags] = context.tags;
  tag(ciTag!);
  tag(osName!);
  const userValues = context.values.filter(([k]) => k !== c.values.ciProvider && k !== c.values.ciBuild);
  for (const [k, v] of context.values) if (k === c.values.ciProvider || k === c.values.ciBuild) value(k, v);
  if (options.git !== false) {
    // Read already (gitInfoAsync, beside the command), or now.
    const g = options.knownGit !== undefined ? options.knownGit.info : gitInfo(cwd, context.ciBranch);
    if (g?.repository) value(c.values.gitRepository, g.repository);
    if (g?.commit) value(c.values.gitCommitId, g.commit);
    if (g?.branch) value(c.values.gitBranch, g.branch);
    if (g !== undefined) {
      value(c.values.gitStatus, g.dirty ? c.gitStatus.dirty : c.gitStatus.clean);
      if (g.dirty) tag(c.tags.dirty);
    }
  }
  for (const t of userTags) tag(t);
  for (const [k, v] of userValues) value(k, v);
  return events;
}

/** The user's locale as BCP 47 (`en-US`), from the usual variables or ICU. */
export function localeOf(env: Env): string {
  const raw = env['LC_ALL'] || env['LC_MESSAGES'] || env['LANG'];
  if (raw && raw !== 'C' && raw !== 'POSIX') {
    const m = /^([a-z]{2,3})(?:[_-]([A-Za-z]{2}))?/.exec(raw);
    if (m) return m[2] ? `${m[1]}-${m[2].toUpperCase()}` : m[1]!;
  }
  return safe(() => Intl.DateTimeFormat().resolvedOptions().locale) ?? 'und';
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
