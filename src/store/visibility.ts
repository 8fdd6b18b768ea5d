// Which builds a caller may see, as a predicate over a build's project: the same rule that
// build-store.ts applies in SQL (exact project names; builds without a project need
// `withoutProject`). Ingest and provenance use it where a decision is made in TypeScript.

import type { Visibility } from './types.js';

/** Whether a build of `project` (null: no project) is visible under `v`. */
export function projectVisible(v: Visibility, project: string | null): boolean {
  if (project === null) return v.withoutProject;
  return v.projects === 'all' || v.projects.includes(project);
}

/** Whether `v` lets the caller see every build (no project-level restriction). */
export function seesEverything(v: Visibility): boolean {
  return v.projects === 'all' && v.withoutProject;
}
