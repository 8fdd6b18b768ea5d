// The three operations of the provenance seed as library functions: publish, evaluate, fetch. Each
// takes the caller (already authenticated and holding the operation's permission), the path
// parameters and the body as they arrived, checks them in the seed's order, applies the access
// rules (access.ts) and returns what to answer. Refusals are domain errors (400 bad criteria with a
// reason, 403 outside the caller's repositories, 404, 429, 500 for a store that fails), answered by
// the HTTP face's one error handler. The HTTP face only authenticates and writes the answer.

import { visibilityOf, type Principal } from '../auth/types.js';
import { ExternalServiceError, ForbiddenError, NotFoundError } from '../errors/domain.js';
import { mayReadRepository, readerOf, type RepositoryAccess } from './access.js';
import { badCriteria, DETAILS } from './errors.js';
import { checkPackageAddress, packageUrlProblem, repositoryOfPackageUrl } from './package.js';
import { buildScanOf, criteriaOf, digestOf, packageOf, readFields, type PathParams, type RequestBody } from './request.js';
import { UnknownPolicyScanError, type ProvenanceService, type PublishRecord } from './service.js';
import { ATTESTATION_ID, INSTANCE } from './stores/store.js';

/** The service and the access configuration the operations apply. */
export interface ProvenanceApi {
  readonly service: ProvenanceService;
  /** Repository prefixes readable per project, for principals restricted to projects. */
  readonly repositoryAccess: RepositoryAccess;
}

/** Needs publishAttestations. The records of the attestations written, one per store and envelope, as they are written. */
export async function publishAttestations(api: ProvenanceApi, principal: Principal, params: PathParams, body: RequestBody): Promise<AsyncIterable<PublishRecord>> {
  const pkg = packageOf(params);
  const pkgProblem = checkPackageAddress(pkg) ?? packageUrlProblem(pkg);
  if (pkgProblem) throw badCriteria(pkgProblem);
  const fields = await readFields(body);
  if (!fields) throw badCriteria('the body is not an object of fields');
  const criteria = criteriaOf(fields);
  if (!mayReadRepository(principal, criteria.repositoryUrl, api.repositoryAccess)) throw new ForbiddenError(DETAILS.forbidden);
  const request = { ...criteria, ...buildScanOf(fields) };
  const builds = await api.service.resolveBuilds(request, visibilityOf(principal));
  const envelopes = api.service.makeEnvelopes(pkg, request, builds);
  return api.service.write(pkg, criteria.sha256, envelopes);
}

/** Needs evaluatePolicies. The results of the scan's policies, in declaration order, as they are judged. */
export async function evaluatePolicyScan(api: ProvenanceApi, principal: Principal, params: PathParams, body: RequestBody): Promise<Iterable<unknown>> {
  const pkg = packageOf(params);
  const pkgProblem = checkPackageAddress(pkg);
  if (pkgProblem) throw badCriteria(pkgProblem);
  const criteria = criteriaOf(await readFields(body));
  if (!mayReadRepository(principal, criteria.repositoryUrl, api.repositoryAccess)) throw new ForbiddenError(DETAILS.forbidden);
  const scan = params['scan']!;
  if (!api.service.hasPolicyScan(scan)) throw new UnknownPolicyScanError(`No policy scan named '${scan}' is defined.`);
  // The pool refuses at once when full (PoolExhaustedError, 429).
  const evaluation = await api.service.pool.run(() => api.service.evaluate(pkg, scan, criteria, readerOf(principal)));
  return evaluation.results;
}

/** Needs readAttestations. The stored envelope (parsed JSON). */
export async function fetchAttestation(api: ProvenanceApi, principal: Principal, params: PathParams): Promise<unknown> {
  const pkg = packageOf(params);
  const { type: digestType, digest } = digestOf(params['digest']!);
  const instance = params['instance']!;
  if (!INSTANCE.test(instance)) throw badCriteria(`invalid instance identifier ${JSON.stringify(instance)}: expected obj:<name> or repo:<name>`);
  const pkgProblem = checkPackageAddress(pkg);
  if (pkgProblem) throw badCriteria(pkgProblem);
  const id = params['id']!;
  if (!api.service.isConfiguredInstance(instance) || !ATTESTATION_ID.test(id)) throw new NotFoundError(DETAILS.notFound);
  const bytes = await api.service.fetch(pkg, digestType, digest, instance, id);
  if (!bytes) throw new NotFoundError(DETAILS.notFound);
  if (principal.projects !== null) {
    // Restricted principals read only attestations we can tie to a repository they may read:
    // the repository_url of a verified statement's subject.
    const statement = api.service.verifiedStatement(bytes);
    const repos = statement?.subject.map((s) => (s.name ? repositoryOfPackageUrl(s.name) : undefined)).filter((r): r is string => r !== undefined) ?? [];
    if (!repos.some((r) => mayReadRepository(principal, r, api.repositoryAccess))) throw new ForbiddenError(DETAILS.forbidden);
    // And only what was made from a build she may see (or from no build of ours).
    if (!statement || !(await api.service.mayRead(statement, readerOf(principal)))) throw new ForbiddenError(DETAILS.forbidden);
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new ExternalServiceError(`stored attestation ${instance}/${id} is not JSON`);
  }
}
