// The provenance service over HTTP (seed 000): publish, evaluate, fetch, both path forms (with and
// without {namespace}), bodies as JSON, x-www-form-urlencoded or multipart, answers as a buffered
// JSON array or NDJSON lines (`Accept: application/x-ndjson`), errors as RFC 7807 documents with
// the seed's texts. Options come from the config section `provenance`.
//
//   const app = await buildApp(ctx, { plugins: [provenancePlugin] });          // inside serve
//   await app.register(provenanceRoutes, { service, repositoryAccess });         // standalone

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { FacePlugin } from './context.js';
// The provenance seed prescribes `type: about:blank` for its problem documents.
import { sendBlankProblem as sendProblem } from './problem.js';
import { decideAccess } from './auth-plugin.js';
import type { AuthResult, Permission, Principal } from '../auth/types.js';
import { visibilityOf } from '../auth/types.js';
import { DEFAULT_DATA_DIR } from '../db/database.js';
import { LocalBuildSource } from '../provenance/build-source.js';
import { parseProvenanceConfig } from '../provenance/config.js';
import { UNRESTRICTED, type Reader } from '../provenance/access.js';
import { BadRequestError, EXTERNAL_SERVICE_PREFIX, ExternalServiceError } from '../provenance/errors.js';
import { openProvenanceService } from '../provenance/open.js';
import { checkPackageAddress, isRepositoryUrl, packageUrlProblem, repositoryOfPackageUrl, repositoryUnder, SHA256, type PackageAddress } from '../provenance/package.js';
import { PoolExhaustedError } from '../provenance/pool.js';
import { UnknownPolicyScanError, type ProvenanceService, type PublishRequest } from '../provenance/service.js';
import { ATTESTATION_ID, DIGEST_TYPE, INSTANCE } from '../provenance/stores/store.js';

/** The seed's detail texts. */
export const DETAILS = {
  unauthorized: 'Full authentication is required to access this resource',
  forbidden: 'Access to this resource is forbidden',
  badCriteria: 'Invalid request content. Bad criteria (sha256 or repositoryUrl).',
  notFound: 'No attestation found matching request.',
  tooMany: 'The service is experiencing too many requests. Please try again later.',
} as const;

export const NDJSON = 'application/x-ndjson';

export interface ProvenanceRoutesOptions {
  readonly service: ProvenanceService;
  /** Repository prefixes readable per project, for principals restricted to projects. */
  readonly repositoryAccess: Readonly<Record<string, readonly string[]>>;
}

type Params = Record<string, string>;

/** Field values of a body in any of the three encodings: name -> every value given. */
type Fields = Map<string, string[]>;

const FIELD_ALIASES: Record<string, string> = {
  'buildScan.ids[]': 'buildScan.ids',
  'buildScan.queries[]': 'buildScan.queries',
  'buildScan.query': 'buildScan.queries',
};

function addField(fields: Fields, rawName: string, value: unknown): void {
  const name = FIELD_ALIASES[rawName] ?? rawName;
  const list = fields.get(name) ?? [];
  if (Array.isArray(value)) {
    for (const v of value) addField(fields, name, v);
    return;
  }
  if (typeof value === 'string') list.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') list.push(String(value));
  else list.push('\0invalid');
  fields.set(name, list);
}

function fieldsOfJson(body: unknown): Fields | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields: Fields = new Map();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (k === 'buildScan' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      for (const [sub, sv] of Object.entries(v as Record<string, unknown>)) addField(fields, `buildScan.${sub}`, sv);
    } else if (v !== null && v !== undefined) addField(fields, k, v);
  }
  return fields;
}

/** A body that cannot be read as the fields of its content type (400, never 500). */
class MalformedBodyError extends Error {
  override readonly name = 'MalformedBodyError';
}

async function readFields(request: FastifyRequest): Promise<Fields | undefined> {
  const type = (request.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data')) {
    // The parser's own errors (no boundary parameter, no closing boundary, a part cut short) carry
    // no status: they are the client's, and answered 400 with the parser's words as the reason.
    if (!/;\s*boundary=/.test(type)) throw new MalformedBodyError('malformed multipart body: the Content-Type has no boundary parameter');
    const fields: Fields = new Map();
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') addField(fields, part.fieldname, part.value);
        else addField(fields, part.fieldname, (await part.toBuffer()).toString('utf8'));
      }
    } catch (e) {
      if (typeof (e as { statusCode?: unknown }).statusCode === 'number') throw e;
      throw new MalformedBodyError(`malformed multipart body: ${(e as Error).message}`);
    }
    return fields;
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const fields: Fields = new Map();
    for (const [k, v] of new URLSearchParams(String(request.body ?? ''))) addField(fields, k, v);
    return fields;
  }
  return fieldsOfJson(request.body);
}

/** The body's fields, or the reason it cannot be read. */
async function fieldsOf(request: FastifyRequest): Promise<Fields | undefined | string> {
  try {
    return await readFields(request);
  } catch (e) {
    if (e instanceof MalformedBodyError) return e.message;
    throw e;
  }
}

function single(fields: Fields, name: string): string | undefined {
  const v = fields.get(name);
  return v && v.length === 1 ? v[0] : undefined;
}

/** sha256 and repositoryUrl of a body, or undefined when either is missing or malformed. */
function criteriaOf(fields: Fields): { sha256: string; repositoryUrl: string } | undefined {
  const sha = single(fields, 'sha256')?.trim().toLowerCase();
  const repo = single(fields, 'repositoryUrl')?.trim();
  if (sha === undefined || !SHA256.test(sha) || repo === undefined || !isRepositoryUrl(repo)) return undefined;
  return { sha256: sha, repositoryUrl: repo };
}

function packageOf(p: Params): PackageAddress {
  return { type: p['type']!, ...(p['namespace'] !== undefined ? { namespace: p['namespace'] } : {}), name: p['name']!, version: p['version']! };
}

function wantsNdjson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    return type === NDJSON && !params.some((x) => /^\s*q=0(\.0*)?\s*$/.test(x));
  });
}

function unauthorized(reply: FastifyReply): FastifyReply {
  reply.header('www-authenticate', 'Basic realm="buildscope", Bearer realm="buildscope"');
  return sendProblem(reply, 401, DETAILS.unauthorized);
}

/**
 * The principal when it may use the endpoint (the access rule every face shares, decideAccess);
 * otherwise answers 401, also for a missing permission, as the provenance seed prescribes.
 */
function permitted(request: FastifyRequest, reply: FastifyReply, permission: Permission): Principal | undefined {
  // A standalone provenance service may run without the app's auth plugin: no result is anonymous.
  const auth = (request as FastifyRequest & { auth?: AuthResult }).auth ?? { kind: 'anonymous' };
  const decision = decideAccess(auth, permission);
  if (decision.kind === 'allowed') return decision.principal;
  unauthorized(reply);
  return undefined;
}

function mayReadRepository(principal: Principal, repository: string | undefined, access: ProvenanceRoutesOptions['repositoryAccess']): boolean {
  if (principal.projects === null) return true;
  if (repository === undefined) return false;
  return principal.projects.some((project) => (access[project] ?? []).some((prefix) => repositoryUnder(repository, prefix)));
}

/** The reader of an evaluation or fetch: restricted principals read through their visibility. */
function readerOf(principal: Principal): Reader {
  return principal.projects === null ? UNRESTRICTED : { kind: 'restricted', visibility: visibilityOf(principal) };
}

function externalProblem(reply: FastifyReply, e: unknown): FastifyReply {
  const message = e instanceof Error ? e.message : String(e);
  return sendProblem(reply, 500, `${EXTERNAL_SERVICE_PREFIX} ${message}`);
}

/** Answers a problem for a known failure; rethrows anything else. */
function failure(reply: FastifyReply, e: unknown, request: FastifyRequest): FastifyReply {
  if (e instanceof BadRequestError) return sendProblem(reply, 400, e.message);
  if (e instanceof UnknownPolicyScanError) return sendProblem(reply, 404, e.message);
  if (e instanceof PoolExhaustedError) {
    reply.header('retry-after', '1');
    return sendProblem(reply, 429, DETAILS.tooMany);
  }
  if (e instanceof ExternalServiceError) {
    request.log.warn({ err: e }, 'external service failed');
    return externalProblem(reply, e);
  }
  request.log.error({ err: e }, 'provenance request failed');
  return externalProblem(reply, e);
}

/**
 * Sends results: a buffered JSON array, or NDJSON lines written as they are produced. The first
 * item is awaited before the status is sent, so a failure up front is still a problem document;
 * a failure later ends the stream with a `FAILURE` line.
 */
async function sendResults(request: FastifyRequest, reply: FastifyReply, items: AsyncIterable<unknown> | Iterable<unknown>): Promise<FastifyReply> {
  if (!wantsNdjson(request)) {
    const all: unknown[] = [];
    for await (const x of items) all.push(x);
    return reply.code(200).type('application/json').send(all);
  }
  const it = (Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : (items as Iterable<unknown>)[Symbol.iterator]()) as AsyncIterator<unknown> | Iterator<unknown>;
  const first = await it.next();
  async function* lines(): AsyncGenerator<string> {
    let next = first;
    while (!next.done) {
      yield `${JSON.stringify(next.value)}\n`;
      try {
        next = await it.next();
      } catch (e) {
        request.log.warn({ err: e }, 'provenance stream failed');
        yield `${JSON.stringify({ status: 'FAILURE', detail: `${EXTERNAL_SERVICE_PREFIX} ${(e as Error).message}` })}\n`;
        return;
      }
    }
  }
  return reply.code(200).type(NDJSON).header('cache-control', 'no-cache').header('x-accel-buffering', 'no').send(Readable.from(lines()));
}

export const provenanceRoutes: FastifyPluginAsync<ProvenanceRoutesOptions> = async (app: FastifyInstance, options) => {
  const { service, repositoryAccess } = options;

  // Body parsers of this plugin only (encapsulated): form fields are read by readFields.
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  }
  if (!app.hasContentTypeParser('multipart/form-data')) {
    await app.register(multipart, { limits: { fields: 1000, fileSize: 1024 * 1024, files: 100, parts: 1100 } });
  }

  // Unparseable bodies are bad criteria, not a generic framework error.
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status === 415) return sendProblem(reply, 415, `Unsupported content type ${request.headers['content-type'] ?? '(none)'}: send application/json, application/x-www-form-urlencoded or multipart/form-data`);
    if (status === 413) return sendProblem(reply, 413, 'The request body is too large');
    if (status >= 400 && status < 500) return sendProblem(reply, 400, DETAILS.badCriteria, { reason: (error as Error).message });
    return failure(reply, error, request);
  });

  const badRequest = (reply: FastifyReply, reason: string) => sendProblem(reply, 400, DETAILS.badCriteria, { reason });

  // ---- publish ----
  const publish = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'publishAttestations');
    if (!principal) return reply;
    const pkg = packageOf(request.params);
    const pkgProblem = checkPackageAddress(pkg) ?? packageUrlProblem(pkg);
    if (pkgProblem) return badRequest(reply, pkgProblem);
    const fields = await fieldsOf(request);
    if (typeof fields === 'string') return badRequest(reply, fields);
    if (!fields) return badRequest(reply, 'the body is not an object of fields');
    const criteria = criteriaOf(fields);
    if (!criteria) return badRequest(reply, 'sha256 must be 64 hex characters and repositoryUrl a URL or host/path');
    if (!mayReadRepository(principal, criteria.repositoryUrl, repositoryAccess)) return sendProblem(reply, 403, DETAILS.forbidden);
    const ids = fields.get('buildScan.ids') ?? [];
    const queries = fields.get('buildScan.queries') ?? [];
    if ([...ids, ...queries].some((v) => v.includes('\0'))) return badRequest(reply, 'buildScan.ids and buildScan.queries must be strings');
    const req: PublishRequest = { ...criteria, buildIds: ids.map((s) => s.trim()).filter((s) => s !== ''), queries: queries.filter((q) => q.trim() !== '') };
    try {
      const builds = await service.resolveBuilds(req, visibilityOf(principal));
      const envelopes = service.makeEnvelopes(pkg, req, builds);
      return await sendResults(request, reply, service.write(pkg, criteria.sha256, envelopes));
    } catch (e) {
      return failure(reply, e, request);
    }
  };

  // ---- evaluate ----
  const evaluate = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'evaluatePolicies');
    if (!principal) return reply;
    const pkg = packageOf(request.params);
    const pkgProblem = checkPackageAddress(pkg);
    if (pkgProblem) return badRequest(reply, pkgProblem);
    const fields = await fieldsOf(request);
    if (typeof fields === 'string') return badRequest(reply, fields);
    const criteria = fields && criteriaOf(fields);
    if (!criteria) return badRequest(reply, 'sha256 must be 64 hex characters and repositoryUrl a URL or host/path');
    if (!mayReadRepository(principal, criteria.repositoryUrl, repositoryAccess)) return sendProblem(reply, 403, DETAILS.forbidden);
    const scan = request.params['scan']!;
    if (!service.hasPolicyScan(scan)) return sendProblem(reply, 404, `No policy scan named '${scan}' is defined.`);
    try {
      const evaluation = await service.pool.run(() => service.evaluate(pkg, scan, criteria, readerOf(principal)));
      return await sendResults(request, reply, evaluation.results);
    } catch (e) {
      return failure(reply, e, request);
    }
  };

  // ---- fetch ----
  const fetchOne = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'readAttestations');
    if (!principal) return reply;
    const pkg = packageOf(request.params);
    const digestParam = request.params['digest']!;
    const colon = digestParam.indexOf(':');
    const digestType = colon < 0 ? '' : digestParam.slice(0, colon).toLowerCase();
    const digest = colon < 0 ? '' : digestParam.slice(colon + 1).toLowerCase();
    const digestOk = DIGEST_TYPE.test(digestType) && (digestType === 'sha256' ? SHA256.test(digest) : digestType === 'sha512' ? /^[0-9a-f]{128}$/.test(digest) : /^[0-9a-f]{16,256}$/.test(digest));
    if (!digestOk) return badRequest(reply, `malformed digest ${JSON.stringify(digestParam)}: expected <algorithm>:<hex>, e.g. sha256:<64 hex characters>`);
    const instance = request.params['instance']!;
    if (!INSTANCE.test(instance)) return badRequest(reply, `invalid instance identifier ${JSON.stringify(instance)}: expected obj:<name> or repo:<name>`);
    const pkgProblem = checkPackageAddress(pkg);
    if (pkgProblem) return badRequest(reply, pkgProblem);
    const id = request.params['id']!;
    if (!service.isConfiguredInstance(instance) || !ATTESTATION_ID.test(id)) return sendProblem(reply, 404, DETAILS.notFound);
    try {
      const bytes = await service.fetch(pkg, digestType, digest, instance, id);
      if (!bytes) return sendProblem(reply, 404, DETAILS.notFound);
      if (principal.projects !== null) {
        // Restricted principals read only attestations we can tie to a repository they may read:
        // the repository_url of a verified statement's subject.
        const statement = service.verifiedStatement(bytes);
        const repos = statement?.subject.map((s) => (s.name ? repositoryOfPackageUrl(s.name) : undefined)).filter((r): r is string => r !== undefined) ?? [];
        if (!repos.some((r) => mayReadRepository(principal, r, repositoryAccess))) return sendProblem(reply, 403, DETAILS.forbidden);
        // And only what was made from a build she may see (or from no build of ours).
        if (!statement || !(await service.mayRead(statement, readerOf(principal)))) return sendProblem(reply, 403, DETAILS.forbidden);
      }
      let envelope: unknown;
      try {
        envelope = JSON.parse(bytes.toString('utf8'));
      } catch {
        return externalProblem(reply, new Error(`stored attestation ${instance}/${id} is not JSON`));
      }
      if (wantsNdjson(request)) return reply.code(200).type(NDJSON).send(`${JSON.stringify(envelope)}\n`);
      return reply.code(200).type('application/json').send(envelope);
    } catch (e) {
      return failure(reply, e, request);
    }
  };

  // OpenAPI documentation only: bodies come in three encodings and are checked by the handlers.
  const doc = (summary: string, description: string, withNamespace: boolean, extra: readonly string[]) => ({
    tags: ['provenance'],
    summary: `${summary}${withNamespace ? '' : ' (package without namespace)'}`,
    description,
    consumes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
    produces: ['application/json', NDJSON, 'application/problem+json'],
    params: {
      type: 'object',
      properties: Object.fromEntries(['type', ...(withNamespace ? ['namespace'] : []), 'name', 'version', ...extra].map((k) => [k, { type: 'string' }])),
    },
  });
  const BODY = 'Body fields: sha256 (64 hex), repositoryUrl (URL or host/path)';
  for (const [prefix, ns] of [['/packages/:type/:namespace/:name/:version', true], ['/packages/:type/:name/:version', false]] as const) {
    app.post(`${prefix}/attestations`, { schema: doc('Publish attestations', `${BODY}, buildScan.ids and buildScan.queries (repeatable). Needs publishAttestations.`, ns, []) }, publish);
    app.post(`${prefix}/policy-scans/:scan`, { schema: doc('Evaluate a policy scan', `${BODY}. Needs evaluatePolicies. 429 when the evaluation pool is exhausted.`, ns, ['scan']) }, evaluate);
    app.get(`${prefix}/:digest/attestations/:instance/:id`, { schema: doc('Fetch an attestation', 'digest is <digestType>:<hex>; instance is obj:<name> or repo:<name>. Needs readAttestations.', ns, ['digest', 'instance', 'id']) }, fetchOne);
  }

  // Public keys are public: no authentication, so verifiers can fetch them.
  app.get('/provenance/keys', { schema: { tags: ['provenance'], summary: 'Public keys of the attestation signers, with their keyids' } }, async (_request, reply) => {
    const own = new Set([service.keys.active.keyid]);
    return reply.send({
      activeKeyId: service.keys.active.keyid,
      keys: service.keys.verification.map((k) => ({
        keyid: k.keyid,
        algorithm: k.algorithm,
        active: own.has(k.keyid),
        publicKey: k.publicKeyPem,
      })),
    });
  });
};

/** The provenance face of `buildscope serve`: reads builds from the server's own store. */
export const provenancePlugin: FacePlugin = async (app, { ctx, publicUrl }) => {
  const config = parseProvenanceConfig(ctx.config.provenance, ctx.config.database.data ?? DEFAULT_DATA_DIR);
  const clock = ctx.clock ?? Date.now;
  // Loaded here, not at the top: the standalone service reads builds over HTTP and needs no parser.
  const { parseQuery } = await import('../query/index.js');
  const builds = new LocalBuildSource(ctx.store, (text) => parseQuery(text, { now: clock() }));
  const service = openProvenanceService(config, builds, publicUrl, ctx.logger);
  await app.register(provenanceRoutes, { service, repositoryAccess: config.repositoryAccess });
};


export interface StandaloneOptions {
  /** The server configuration: database (users and keys of callers), `provenance` section, host and port. */
  readonly config: import('../config.js').ServerConfig;
  /** Base URL of the Buildscope server whose builds are read. */
  readonly serverUrl: string;
  /** Access key used to read builds from that server. */
  readonly accessKey: string;
  readonly logger: import('../log.js').Logger;
}

/**
 * The provenance service on its own, reading builds over a Buildscope server's REST API. Callers
 * authenticate against the users and access keys of the local database (`buildscope user`,
 * `buildscope access-key` with the same --data/--db).
 */
export async function buildStandaloneApp(options: StandaloneOptions): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const { default: Fastify } = await import('fastify');
  const { openDatabase } = await import('../db/database.js');
  const { openAuth } = await import('../auth/index.js');
  const { authPlugin } = await import('./auth-plugin.js');
  const { RemoteBuildSource } = await import('../provenance/build-source.js');
  const { config, logger } = options;
  const database = await openDatabase(config.database);
  const auth = await openAuth(database, config);
  const provenance = parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR);
  const service = openProvenanceService(provenance, new RemoteBuildSource(options.serverUrl, options.accessKey), () => options.serverUrl, logger);
  const app = Fastify({ loggerInstance: logger, disableRequestLogging: true, bodyLimit: config.limits.requestBodyBytes, maxParamLength: 500 }) as unknown as FastifyInstance;
  app.setNotFoundHandler((request, reply) => sendProblem(reply, 404, `No resource at ${request.method} ${request.url.split('?')[0]}`));
  await app.register(authPlugin(auth.authenticator));
  await app.register(provenanceRoutes, { service, repositoryAccess: provenance.repositoryAccess });
  return {
    app,
    async close() {
      await app.close();
      await database.close();
    },
  };
}
