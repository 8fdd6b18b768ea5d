// Which builds a caller may see: one rule (exact project names; builds without a project need
// `withoutProject`), as an SQL condition on `builds` for every read of builds (listings, lookups,
// counts, facets, trends, the values of a field, the rollups read under the name `builds`) and as
// a predicate over a build's project where ingest and provenance decide in TypeScript.

import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Visibility } from '../types.js';

/** The builds `v` shows, as one condition on `builds.project_name`. */
export function visibilityCondition(v: Visibility): RawBuilder<SqlBool> {
  if (v.projects === 'all') return v.withoutProject ? sql<SqlBool>`1 = 1` : sql<SqlBool>`builds.project_name IS NOT NULL`;
  const projects = [...v.projects];
  const listed = projects.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`builds.project_name IN (${sql.join(projects)})`;
  return v.withoutProject ? sql<SqlBool>`(${listed} OR builds.project_name IS NULL)` : listed;
}

/** Whether a build of `project` (null: no project) is visible under `v`. */
export function projectVisible(v: Visibility, project: string | null): boolean {
  if (project === null) return v.withoutProject;
  return v.projects === 'all' || v.projects.includes(project);
}

/** Whether `v` lets the caller see every build (no project-level restriction). */
export function seesEverything(v: Visibility): boolean {
  return v.projects === 'all' && v.withoutProject;
}
