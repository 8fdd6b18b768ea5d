// What each resolved configuration resolved to (ResolvedDependencies events, sent by the Gradle
// and Maven agents, the npm agent from the lockfile and the pytest plugin from its environment:
// docs/send-your-builds.md), read for the comparison of two builds ("dependencies resolved
// differently").
//
// An entry is 'group:name:version' (Maven: 'groupId:artifactId[:classifier]:version'; npm
// '@scope/name:version'; pytest 'name:version'): the last ':' part is the version, the rest the
// module. A project dependency ('project :lib') and an entry
// without ':' have no version. Unresolved entries keep their requested version, marked.

import type { BuildEvent } from '../store/types.js';

/** One configuration (Maven: one scope) of one project, as the build resolved it. */
export interface ResolvedConfiguration {
  readonly project: string;
  readonly configuration: string;
  /** Version by module ('' for a module without one); two versions of one module joined by ', '. */
  readonly modules: Readonly<Record<string, string>>;
  /** Entries the agent counted but did not list (its bound): the modules may not be all. */
  readonly omitted: number;
}

const UNRESOLVED = ' (unresolved)';

/** An entry as module and version. */
function moduleOf(entry: string): { module: string; version: string } {
  if (entry.startsWith('project ')) return { module: entry, version: '' };
  const at = entry.lastIndexOf(':');
  return at <= 0 ? { module: entry, version: '' } : { module: entry.slice(0, at), version: entry.slice(at + 1) };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The configurations a build resolved, ordered by project and configuration. A configuration sent
 * twice is the last one sent (a Gradle configuration resolved again is the same graph).
 */
export function resolvedConfigurationsOf(events: readonly BuildEvent[]): ResolvedConfiguration[] {
  const out = new Map<string, ResolvedConfiguration>();
  for (const e of events) {
    if (e.type.eventType !== 'ResolvedDependencies') continue;
    const { project, configuration } = e.data;
    if (typeof project !== 'string' || typeof configuration !== 'string') continue;
    const versions = new Map<string, string[]>();
    const add = (entry: string, mark: string) => {
      const { module, version } = moduleOf(entry);
      versions.set(module, [...(versions.get(module) ?? []), version + mark]);
    };
    for (const entry of strings(e.data['dependencies'])) add(entry, '');
    for (const entry of strings(e.data['unresolved'])) add(entry, UNRESOLVED);
    const modules = Object.fromEntries([...versions].map(([m, vs]) => [m, [...new Set(vs)].sort().join(', ')]));
    const omitted = typeof e.data['omitted'] === 'number' && Number.isFinite(e.data['omitted']) ? Math.max(0, e.data['omitted']) : 0;
    out.set(configurationKey(project, configuration), { project, configuration, modules, omitted });
  }
  return [...out.keys()].sort().map((k) => out.get(k)!);
}

export const configurationKey = (project: string, configuration: string): string => `${project}\u0000${configuration}`;

/** How a resolved configuration is named in a list: `:app compileClasspath`, the root project's `compileClasspath`. */
export const configurationName = (c: { readonly project: string; readonly configuration: string }): string => (c.project === ':' ? c.configuration : `${c.project} ${c.configuration}`);
