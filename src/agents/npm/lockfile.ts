// What the npm project of a build resolved, from its lockfile (package-lock.json or
// npm-shrinkwrap.json, lockfileVersion 2 or 3: the `packages` map): one ResolvedDependencies event
// per project (the root package and each workspace package) and dependency type, for the
// comparison's "dependencies resolved differently" (docs/send-your-builds.md, "npm, yarn, pnpm").
//
// The lockfile is read once, when the build is made (after the command: `npm install` and `npm ci`
// write it), and only as JSON; nothing is resolved or fetched. A missing, unreadable or foreign
// lockfile (v1, yarn.lock, pnpm-lock.yaml) gives no event.

import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { BuildEvent } from '../../store/types.js';
import { event } from '../common-build.js';
import { agentContract } from '../contract.js';

/** One entry of the lockfile's `packages` map, as npm writes it (the fields read here). */
interface LockEntry {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly dev?: unknown;
  readonly optional?: unknown;
  readonly devOptional?: unknown;
  readonly link?: unknown;
  readonly resolved?: unknown;
  readonly workspaces?: unknown;
  readonly dependencies?: unknown;
  readonly optionalDependencies?: unknown;
  readonly peerDependencies?: unknown;
  readonly devDependencies?: unknown;
}

type Packages = Readonly<Record<string, LockEntry>>;

/**
 * The configurations, in the order they are sent, as npm's own flags divide a tree but for each
 * project alone: what its `dependencies` and peers need (a production install, `--omit=dev`), what
 * optional dependencies add (`--omit=optional` leaves it out), what only `devDependencies` add.
 */
export const NPM_CONFIGURATIONS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;
export type NpmConfiguration = (typeof NPM_CONFIGURATIONS)[number];

const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json'];

/** The lockfile npm would use for `cwd`: the nearest directory at or above it that holds one (a workspace's root holds its workspaces' lockfile). */
export function findLockfile(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    for (const name of LOCKFILES) {
      const file = join(dir, name);
      if (statSync(file, { throwIfNoEntry: false })?.isFile() === true) return file;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const names = (deps: unknown): string[] => (typeof deps === 'object' && deps !== null && !Array.isArray(deps) ? Object.keys(deps) : []);

/** The package name a `node_modules/...` location holds (`node_modules/@scope/x/node_modules/y` -> `y`; a scoped name keeps its scope). */
function nameAt(key: string): string {
  const at = key.lastIndexOf('node_modules/');
  return at < 0 ? basename(key) : key.slice(at + 'node_modules/'.length);
}

/** Where node finds `name` from the package at `from`: its own node_modules, then each enclosing one. */
function resolveFrom(packages: Packages, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[key] !== undefined) return key;
    if (dir === '') return undefined;
    // `a/node_modules/b` -> `a`; a package at the top (`node_modules/b`, `packages/b`) -> the root.
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

/** A workspace pattern (`packages/*`, `apps/**`) as a regular expression over lockfile keys. */
function workspacePattern(pattern: string): RegExp {
  const clean = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  const source = clean
    .split('/')
    .map((part) => (part === '**' ? '.*' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** `name:version`; a version with a `:` (npm writes none) is left out, so that the last `:` always ends the name. */
function entryOf(name: string, version: unknown): string {
  return typeof version === 'string' && version !== '' && !version.includes(':') ? `${name}:${version}` : name;
}

export interface ProjectDependencies {
  readonly project: string;
  readonly configurations: Readonly<Record<NpmConfiguration, readonly string[]>>;
}

/**
 * Each project of a lockfile's `packages` map (the root, then its workspaces by name) with every
 * package it reaches through its dependencies, transitively, as node resolves them (a package's
 * own node_modules, then each enclosing one), as `name:version` under the first configuration
 * that reaches it. Another workspace a project reaches is `project <name>`, and its dependencies
 * are reached through it (as a Gradle project dependency's are).
 */
export function projectsOf(lock: { readonly name?: unknown; readonly packages?: unknown }, fallbackName: string): ProjectDependencies[] {
  if (typeof lock.packages !== 'object' || lock.packages === null || Array.isArray(lock.packages)) return [];
  const packages = lock.packages as Packages;
  const root = packages[''] ?? {};
  const patterns = (Array.isArray(root.workspaces) ? root.workspaces : []).filter((p): p is string => typeof p === 'string').map(workspacePattern);
  // A workspace's name: its entry's, else the root link that points at it, else its folder's.
  const linkedAs = new Map<string, string>();
  for (const [key, e] of Object.entries(packages)) if (e.link === true && typeof e.resolved === 'string') linkedAs.set(e.resolved, nameAt(key));
  const workspaces = Object.keys(packages).filter((k) => k !== '' && !k.startsWith('node_modules/') && !k.includes('/node_modules/') && !k.startsWith('../') && patterns.some((p) => p.test(k)));
  const nameOf = (key: string): string => {
    const e = packages[key] ?? {};
    if (typeof e.name === 'string' && e.name !== '') return e.name;
    if (key === '') return typeof lock.name === 'string' && lock.name !== '' ? lock.name : fallbackName;
    return linkedAs.get(key) ?? basename(key);
  };
  const isWorkspace = new Set(workspaces);
  const projects = [
    { key: '', name: nameOf('') },
    ...workspaces.map((key) => ({ key, name: nameOf(key) })).sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)),
  ];
  return projects.map(({ key: projectKey, name: project }) => {
    const own = packages[projectKey] ?? {};
    const from = (...deps: unknown[]): [string, string][] => deps.flatMap((d) => names(d).map((n): [string, string] => [projectKey, n]));
    /** Where a dependency is installed, a link (a workspace, a `file:` folder) standing for what it points at. */
    const place = (at: string): { target: string; entry: string } => {
      const placed = packages[at]!;
      const target = placed.link === true && typeof placed.resolved === 'string' ? placed.resolved : at;
      return { target, entry: isWorkspace.has(target) ? `project ${nameOf(target)}` : entryOf(nameAt(at), (packages[target] ?? {}).version) };
    };
    const taken = new Set<string>([projectKey]);
    /** Every package reached from `starts` over `edges` and not taken by an earlier configuration; `optional` collects the optional edges left for later. */
    const reach = (starts: [string, string][], edges: (e: LockEntry) => unknown[], optional?: [string, string][]): string[] => {
      const entries = new Set<string>();
      const queue = [...starts];
      for (let next = 0; next < queue.length; next++) {
        const [parent, dependency] = queue[next]!;
        const at = resolveFrom(packages, parent, dependency);
        if (at === undefined) continue;
        const { target, entry } = place(at);
        if (taken.has(target)) continue;
        taken.add(target);
        entries.add(entry);
        const e = packages[target] ?? {};
        for (const d of edges(e)) for (const n of names(d)) queue.push([target, n]);
        if (optional !== undefined) for (const n of names(e.optionalDependencies)) optional.push([target, n]);
      }
      return [...entries].sort();
    };
    // As npm flags a package (calcDepFlags), but for this project alone: what its dependencies and
    // peers need at run time; then what only optional dependencies (its own, or of those) add;
    // then what only its devDependencies add. A workspace's devDependencies are its own.
    const leftOptional: [string, string][] = [];
    const dependencies = reach(from(own.dependencies, own.peerDependencies), (e) => [e.dependencies, e.peerDependencies], leftOptional);
    const optionalDependencies = reach([...from(own.optionalDependencies), ...leftOptional], (e) => [e.dependencies, e.optionalDependencies, e.peerDependencies]);
    const devDependencies = reach(from(own.devDependencies), (e) => [e.dependencies, e.optionalDependencies, e.peerDependencies]);
    return { project, configurations: { dependencies, devDependencies, optionalDependencies } };
  });
}

/**
 * The ResolvedDependencies events of the lockfile npm would use in `cwd`, bounded by the
 * contract's buildDependencies (all events together; the entries past it counted in `omitted`).
 * None when there is no lockfile npm 7 or later wrote (lockfileVersion 2 or 3), or it cannot be
 * read: the build goes on without them.
 */
export function lockfileDependencyEvents(cwd: string, timestamp: number, bound = agentContract().bounds.buildDependencies): BuildEvent[] {
  try {
    const file = findLockfile(cwd);
    if (file === undefined) return [];
    const lock = JSON.parse(readFileSync(file, 'utf8')) as { lockfileVersion?: unknown; name?: unknown; packages?: unknown };
    if (typeof lock !== 'object' || lock === null || (lock.lockfileVersion !== 2 && lock.lockfileVersion !== 3)) return [];
    let left = bound;
    const events: BuildEvent[] = [];
    for (const { project, configurations } of projectsOf(lock, basename(dirname(file)))) {
      for (const configuration of NPM_CONFIGURATIONS) {
        const all = configurations[configuration];
        if (all.length === 0) continue;
        const listed = all.slice(0, Math.max(0, left));
        left -= listed.length;
        const omitted = all.length - listed.length;
        events.push(event('ResolvedDependencies', { project, configuration, dependencies: listed, ...(omitted > 0 ? { omitted } : {}) }, timestamp));
      }
    }
    return events;
  } catch {
    // A broken lockfile is the build's business, not the agent's.
    return [];
  }
}
