// Which attestations a caller's evaluation or fetch may read (docs/provenance.md, "Attestations
// are bound to their repository"). An attestation belongs to the repository named by the
// `repository_url` of its subject's package URL; one without that belongs to no repository.
// Evaluation counts only the attestations of the requested repository; a caller restricted to
// projects, in addition, reads none that belong to no repository and none made from a build she
// may not see. A caller restricted to projects publishes, evaluates and fetches only for the
// repositories her projects' `repositoryAccess` prefixes cover (mayReadRepository).

import { visibilityOf, type Principal } from '../auth/types.js';
import type { Visibility } from '../store/types.js';
import { normaliseRepository, repositoryOfPackageUrl, repositoryUnder } from './package.js';
import { BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1 } from './predicates.js';
import type { Statement } from './statement.js';

/** Who reads: unrestricted callers see every build; restricted ones through their visibility. */
export type Reader = { readonly kind: 'unrestricted' } | { readonly kind: 'restricted'; readonly visibility: Visibility };

export const UNRESTRICTED: Reader = { kind: 'unrestricted' };

/**
 * The repositories of the subjects that carry `sha256`: the normalised `repository_url` of each,
 * or null for a subject whose name gives none (not a package URL, or without that qualifier).
 */
export function subjectRepositories(statement: Statement, sha256: string): (string | null)[] {
  const want = sha256.toLowerCase();
  return statement.subject
    .filter((s) => s.digest?.['sha256']?.toLowerCase() === want)
    .map((s) => {
      const repo = s.name ? repositoryOfPackageUrl(s.name) : undefined;
      return repo === undefined || repo === '' ? null : normaliseRepository(repo);
    });
}

/** Whether the statement is about the artifact `sha256` in `repositoryUrl`, for this reader. */
export function boundTo(statement: Statement, sha256: string, repositoryUrl: string, reader: Reader): boolean {
  const want = normaliseRepository(repositoryUrl);
  return subjectRepositories(statement, sha256).some((r) => (r === null ? reader.kind === 'unrestricted' : r === want));
}

/** What an attestation tells of the build it was made from. */
export type BuildOrigin =
  /** Made by Buildscope from this build. */
  | { readonly kind: 'build'; readonly id: string }
  /** Made by Buildscope, but the build cannot be told (a predicate changed by hand). */
  | { readonly kind: 'unknown' }
  /** Not made from a Buildscope build (a scanner's, another signer's). */
  | { readonly kind: 'none' };

const OUR_BUILD_TYPE = 'https://buildscope.dev/build-types/';

/**
 * The build an attestation of ours was made from: `buildId` of the build-tool predicate, or the
 * last path segment of the build URI of our SLSA provenance (not tied to `buildUriBase`, which
 * may have changed since it was written).
 */
export function buildOrigin(statement: Statement): BuildOrigin {
  const p = statement.predicate as Record<string, unknown>;
  if (statement.predicateType === BUILD_TOOL_PREDICATE) {
    return typeof p['buildId'] === 'string' && p['buildId'] !== '' ? { kind: 'build', id: p['buildId'] } : { kind: 'unknown' };
  }
  if (statement.predicateType !== SLSA_PROVENANCE_V1) return { kind: 'none' };
  const get = (o: unknown, k: string): unknown => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined);
  const buildType = get(get(p, 'buildDefinition'), 'buildType');
  if (typeof buildType !== 'string' || !buildType.startsWith(OUR_BUILD_TYPE)) return { kind: 'none' };
  const uri = get(get(get(p, 'runDetails'), 'metadata'), 'invocationId');
  if (typeof uri !== 'string') return { kind: 'unknown' };
  try {
    const last = new URL(uri).pathname.split('/').filter((x) => x !== '').pop();
    return last === undefined ? { kind: 'unknown' } : { kind: 'build', id: decodeURIComponent(last) };
  } catch {
    return { kind: 'unknown' };
  }
}

/** Repository prefixes readable per project, for principals restricted to projects (config `repositoryAccess`). */
export type RepositoryAccess = Readonly<Record<string, readonly string[]>>;

/** Whether a principal may publish for, evaluate or read attestations of `repository`. */
export function mayReadRepository(principal: Principal, repository: string | undefined, access: RepositoryAccess): boolean {
  if (principal.projects === null) return true;
  if (repository === undefined) return false;
  return principal.projects.some((project) => (access[project] ?? []).some((prefix) => repositoryUnder(repository, prefix)));
}

/** The reader of an evaluation or fetch: restricted principals read through their visibility. */
export function readerOf(principal: Principal): Reader {
  return principal.projects === null ? UNRESTRICTED : { kind: 'restricted', visibility: visibilityOf(principal) };
}
