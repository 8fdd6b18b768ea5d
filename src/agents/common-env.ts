// What the agents learn about where a build runs: the agent host (with redaction on request), the
// CI provider and job, and the git checkout. The tag and value names are the ones users know from
// the open common-custom-user-data plugin (`CI`/`LOCAL`, `CI provider`, `Git branch`, ...).
// Environment variables are read to recognise a CI, never sent.

import { execFileSync } from 'node:child_process';
import { hostname, networkInterfaces, userInfo } from 'node:os';
import type { BuildEvent } from '../store/types.js';
import { event } from './common-build.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** What the user asked to hide: `BUILDSCOPE_REDACT=user,hostname,ip` (any subset, `all` for all three). */
export interface Redaction {
  readonly user: boolean;
  readonly hostname: boolean;
  readonly ip: boolean;
}

export function redactionFrom(env: Env): Redaction {
  const words = new Set((env['BUILDSCOPE_REDACT'] ?? '').toLowerCase().split(/[\s,]+/).filter(Boolean));
  const all = words.has('all');
  return { user: all || words.has('user'), hostname: all || words.has('hostname'), ip: all || words.has('ip') };
}

/** `BuildAgent` data: user, host names and local IP addresses, each left out when redacted. */
export function buildAgentData(redaction: Redaction, known: { user?: string; host?: string } = {}): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (!redaction.user) {
    const user = known.user ?? safe(() => userInfo().username);
    if (user) data['username'] = user;
  }
  if (!redaction.hostname) {
    const host = known.host ?? safe(() => hostname());
    if (host) {
      data['publicHostname'] = host;
      data['localHostname'] = host;
    }
  }
  if (!redaction.ip && known.host === undefined) {
    const addresses = Object.values(safe(() => networkInterfaces()) ?? {})
      .flat()
      .filter((a) => a !== undefined && !a.internal)
      .map((a) => a!.address);
    if (addresses.length > 0) data['localIpAddresses'] = addresses;
  }
  return data;
}

interface CiProvider {
  readonly name: string;
  readonly detect: (env: Env) => boolean;
  readonly jobUrl: (env: Env) => string | undefined;
}

const CI_PROVIDERS: readonly CiProvider[] = [
  {
    name: 'GitHub Actions',
    detect: (e) => e['GITHUB_ACTIONS'] === 'true',
    jobUrl: (e) => (e['GITHUB_SERVER_URL'] && e['GITHUB_REPOSITORY'] && e['GITHUB_RUN_ID'] ? `${e['GITHUB_SERVER_URL']}/${e['GITHUB_REPOSITORY']}/actions/runs/${e['GITHUB_RUN_ID']}` : undefined),
  },
  { name: 'GitLab CI', detect: (e) => e['GITLAB_CI'] !== undefined, jobUrl: (e) => e['CI_JOB_URL'] },
  { name: 'Jenkins', detect: (e) => e['JENKINS_URL'] !== undefined && e['BUILD_URL'] !== undefined, jobUrl: (e) => e['BUILD_URL'] },
  { name: 'CircleCI', detect: (e) => e['CIRCLECI'] !== undefined, jobUrl: (e) => e['CIRCLE_BUILD_URL'] },
  { name: 'Buildkite', detect: (e) => e['BUILDKITE'] !== undefined, jobUrl: (e) => e['BUILDKITE_BUILD_URL'] },
  { name: 'Azure Pipelines', detect: (e) => e['TF_BUILD'] !== undefined, jobUrl: (e) => (e['SYSTEM_TEAMFOUNDATIONCOLLECTIONURI'] && e['SYSTEM_TEAMPROJECT'] && e['BUILD_BUILDID'] ? `${e['SYSTEM_TEAMFOUNDATIONCOLLECTIONURI']}${e['SYSTEM_TEAMPROJECT']}/_build/results?buildId=${e['BUILD_BUILDID']}` : undefined) },
  { name: 'Travis CI', detect: (e) => e['TRAVIS'] !== undefined, jobUrl: (e) => e['TRAVIS_BUILD_WEB_URL'] },
];

export interface CiInfo {
  /** The recognised provider, or 'generic' for `CI=true` alone. */
  readonly provider?: string;
  readonly jobUrl?: string;
}

/** The CI this build runs on, or undefined for a local build. */
export function detectCi(env: Env): CiInfo | undefined {
  for (const p of CI_PROVIDERS) {
    if (p.detect(env)) {
      const jobUrl = p.jobUrl(env);
      return { provider: p.name, ...(jobUrl ? { jobUrl } : {}) };
    }
  }
  if (env['CI'] !== undefined && env['CI'] !== 'false' && env['CI'] !== '') return {};
  return undefined;
}

export interface GitInfo {
  readonly repository?: string;
  readonly commit?: string;
  readonly branch?: string;
  /** `git status --porcelain` output, when the checkout has changes. */
  readonly status?: string;
}

/** The git checkout at `cwd` (undefined outside one or without git). Bounded in time: never slows a build much. */
export function gitInfo(cwd: string, env: Env = {}): GitInfo | undefined {
  const git = (...args: string[]): string | undefined =>
    safe(() => execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd());
  // One call gives commit, branch and changes (porcelain v2 headers); a second the remote.
  const status = git('status', '--porcelain=v2', '--branch');
  if (status === undefined) return undefined;
  let commit: string | undefined;
  let branch: string | undefined;
  const changes: string[] = [];
  for (const line of status.split('\n')) {
    if (line.startsWith('# branch.oid ')) commit = line.slice('# branch.oid '.length);
    else if (line.startsWith('# branch.head ')) branch = line.slice('# branch.head '.length);
    else if (line !== '' && !line.startsWith('#')) changes.push(line);
  }
  if (commit === undefined || commit === '(initial)') return undefined;
  // CI checkouts are often detached; the providers name the branch.
  if (branch === undefined || branch === '(detached)') {
    branch = env['GITHUB_HEAD_REF'] || env['GITHUB_REF_NAME'] || env['CI_COMMIT_REF_NAME'] || env['BRANCH_NAME'] || env['GIT_BRANCH'] || undefined;
  }
  const remote = git('config', '--get', 'remote.origin.url')?.trim();
  return {
    commit,
    ...(branch ? { branch } : {}),
    ...(remote ? { repository: withoutUserInfo(remote) } : {}),
    ...(changes.length > 0 ? { status: changes.join('\n') } : {}),
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

/** The operating system's name as the tags show it (`Linux`, `Mac OS X`, `Windows`). */
export function osTag(platform: NodeJS.Platform = process.platform): string {
  switch (platform) {
    case 'linux':
      return 'Linux';
    case 'darwin':
      return 'Mac OS X';
    case 'win32':
      return 'Windows';
    default:
      return platform;
  }
}

/**
 * `UserTag` and `UserNamedValue` events for CI (or LOCAL), the OS, git, and the user's own tags
 * and values (`BUILDSCOPE_TAGS=a,b`, `BUILDSCOPE_VALUES=key=value;key2=value2`).
 */
export function contextEvents(env: Env, cwd: string, at: number, options: { git?: boolean } = {}): BuildEvent[] {
  const events: BuildEvent[] = [];
  const tag = (t: string) => events.push(event('UserTag', { tag: t }, at));
  const value = (key: string, v: string) => events.push(event('UserNamedValue', { key, value: v }, at));
  const ci = detectCi(env);
  tag(ci ? 'CI' : 'LOCAL');
  if (ci?.provider) value('CI provider', ci.provider);
  if (ci?.jobUrl) value('CI build', ci.jobUrl);
  tag(osTag());
  if (options.git !== false) {
    const g = gitInfo(cwd, env);
    if (g?.repository) value('Git repository', g.repository);
    if (g?.commit) value('Git commit id', g.commit);
    if (g?.branch) value('Git branch', g.branch);
    if (g?.status !== undefined) {
      tag('Dirty');
      value('Git status', g.status.slice(0, 2000));
    }
  }
  for (const t of (env['BUILDSCOPE_TAGS'] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) tag(t);
  for (const pair of (env['BUILDSCOPE_VALUES'] ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0) value(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
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
