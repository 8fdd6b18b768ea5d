// Why a task missed the cache: the inputs a tool made a task's cache key of (TaskInputs events:
// the Gradle agent reads them from Gradle's own snapshot of each task's inputs; ingest-bep from
// Bazel's execution log, one per action, src/agents/bazel/execution-log.ts), read from one build,
// and compared between two. For a task whose key differs, the comparison names each input
// whose hash differs and, for file inputs, the files that were changed, added or removed; an
// input whose changed files all lie in another task's outputs changed because that task's
// outputs did ("upstream"), so that the summary names the root cause and not its consequences.
//
// Pure functions over events; compare.ts calls them. Every result is the same whichever build is
// A, up to swapping (test/services/compare.property.test.ts).

import type { BuildEvent } from '../store/types.js';
import { compareText } from './text-order.js';

/** What one task's cache key was made of, as its TaskInputs event says. */
export interface TaskInputFacts {
  readonly path: string;
  /** Tells apart tasks of the same path in one build (1, 2, ...), as TaskFacts do. */
  readonly occurrence: number;
  readonly cacheKey: string | null;
  /** The task's implementation (class loader, action classes and their loaders) as one comparable text. */
  readonly implementation: string;
  /** Input property -> the tool's hash of its value (files included). */
  readonly inputs: Readonly<Record<string, string>>;
  /** File input property -> file (from the build's root, or its name) -> hash. */
  readonly files: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** File input properties with files past the agent's bound (not listed). */
  readonly filesOmitted: readonly string[];
  /** The task's output files and directories, from the build's root. */
  readonly outputs: readonly string[];
  /**
   * Whether the work came from the cache, for a record that is not a task's (a Bazel action from
   * its execution log, `remoteCacheHit`); a task's outcome says it for a task.
   */
  readonly avoided?: boolean;
}

export type Change = 'changed' | 'added' | 'removed';

export interface FileChange {
  readonly path: string;
  readonly change: Change;
}

export interface InputChange {
  readonly name: string;
  readonly change: Change;
  /** The files that differ, for a file input whose files were listed in both builds. */
  readonly files: readonly FileChange[];
  /** Some of its files were not listed (the agent's bound): the files named may not be all. */
  readonly filesOmitted: boolean;
  /** Tasks whose outputs hold every changed file of this input (none for a value input). */
  readonly producedBy: readonly string[];
}

/**
 * Why the key differs, most telling first: an input that no other task produced (`inputs`), the
 * task's implementation (`implementation`: another plugin or Gradle version), only inputs that
 * other tasks' outputs changed (`upstream`), or nothing the agent recorded (`unknown`).
 */
export const MISS_CAUSES = ['inputs', 'implementation', 'upstream', 'unknown'] as const;
export type MissCause = (typeof MISS_CAUSES)[number];

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function stringRecord(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The TaskInputs events of a build, each with its task's occurrence number (the n-th event of a path is its n-th run). */
export function taskInputFactsOf(events: readonly BuildEvent[]): TaskInputFacts[] {
  const seen = new Map<string, number>();
  const out: TaskInputFacts[] = [];
  for (const e of events) {
    if (e.type.eventType !== 'TaskInputs') continue;
    const d = e.data;
    const path = str(d['path']);
    if (path === null) continue;
    const occurrence = (seen.get(path) ?? 0) + 1;
    seen.set(path, occurrence);
    const filesData = typeof d['files'] === 'object' && d['files'] !== null && !Array.isArray(d['files']) ? (d['files'] as Record<string, unknown>) : {};
    const omitted = typeof d['filesOmitted'] === 'object' && d['filesOmitted'] !== null ? Object.keys(d['filesOmitted'] as object) : [];
    out.push({
      path,
      occurrence,
      cacheKey: str(d['cacheKey']),
      implementation: JSON.stringify(d['implementation'] ?? null),
      inputs: stringRecord(d['inputs']),
      files: Object.fromEntries(Object.entries(filesData).map(([k, v]) => [k, stringRecord(v)])),
      filesOmitted: omitted.sort(compareText),
      outputs: Array.isArray(d['outputs']) ? (d['outputs'] as unknown[]).filter((x): x is string => typeof x === 'string') : [],
      ...(typeof d['remoteCacheHit'] === 'boolean' ? { avoided: d['remoteCacheHit'] } : {}),
    });
  }
  return out;
}

function mapChanges(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): { name: string; change: Change }[] {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareText);
  const out: { name: string; change: Change }[] = [];
  for (const name of names) {
    const x = a[name];
    const y = b[name];
    if (x === y) continue;
    out.push({ name, change: x === undefined ? 'added' : y === undefined ? 'removed' : 'changed' });
  }
  return out;
}

/** Output roots of every task of both builds, to find which task a file came out of. */
export type Producers = readonly { readonly root: string; readonly task: string }[];

export function producersOf(...builds: (readonly TaskInputFacts[])[]): Producers {
  const seen = new Set<string>();
  const out: { root: string; task: string }[] = [];
  for (const list of builds) {
    for (const t of list) {
      for (const root of t.outputs) {
        const key = `${root}\u0000${t.path}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ root, task: t.path });
      }
    }
  }
  return out;
}

const under = (file: string, root: string): boolean => file === root || file.startsWith(root.endsWith('/') ? root : `${root}/`);

/** The tasks (other than `self`) whose outputs hold every one of the files, sorted; none when a file is no task's output. */
function producedBy(files: readonly FileChange[], producers: Producers, self: string): string[] {
  if (files.length === 0) return [];
  let common: Set<string> | undefined;
  for (const f of files) {
    const tasks = new Set(producers.filter((p) => p.task !== self && under(f.path, p.root)).map((p) => p.task));
    common = common === undefined ? tasks : new Set([...common].filter((t) => tasks.has(t)));
    if (common.size === 0) return [];
  }
  return [...(common ?? [])].sort(compareText);
}

export interface InputsDifference {
  readonly before: string | null;
  readonly after: string | null;
  readonly implementation: boolean;
  readonly inputs: readonly InputChange[];
  readonly cause: MissCause;
}

/** How one task's recorded inputs differ between A and B, or undefined when its key and inputs are the same. */
export function inputsDifference(a: TaskInputFacts, b: TaskInputFacts, producers: Producers): InputsDifference | undefined {
  const implementation = a.implementation !== b.implementation;
  const inputs: InputChange[] = mapChanges(a.inputs, b.inputs).map(({ name, change }) => {
    const fa = a.files[name];
    const fb = b.files[name];
    const filesOmitted = a.filesOmitted.includes(name) || b.filesOmitted.includes(name);
    const files = fa !== undefined && fb !== undefined ? mapChanges(fa, fb).map((c) => ({ path: c.name, change: c.change })) : [];
    return { name, change, files, filesOmitted, producedBy: filesOmitted ? [] : producedBy(files, producers, a.path) };
  });
  if (a.cacheKey === b.cacheKey && !implementation && inputs.length === 0) return undefined;
  const rootInput = inputs.some((i) => i.producedBy.length === 0);
  const cause: MissCause = rootInput ? 'inputs' : implementation ? 'implementation' : inputs.length > 0 ? 'upstream' : 'unknown';
  return { before: a.cacheKey, after: b.cacheKey, implementation, inputs, cause };
}

const swapChange = (c: Change): Change => (c === 'added' ? 'removed' : c === 'removed' ? 'added' : c);

/** The same difference seen from the other build. */
export function swapInputs(d: InputsDifference): InputsDifference {
  return {
    ...d,
    before: d.after,
    after: d.before,
    inputs: d.inputs.map((i) => ({ ...i, change: swapChange(i.change), files: i.files.map((f) => ({ ...f, change: swapChange(f.change) })) })),
  };
}
