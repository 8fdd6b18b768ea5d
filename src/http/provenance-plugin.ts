// The provenance service over HTTP (seed 000): publish, evaluate, fetch, both path forms (with and
// without {namespace}), bodies as JSON, x-www-form-urlencoded or multipart, answers as a buffered
// JSON array or NDJSON lines (`Accept: application/x-ndjson`), errors as RFC 7807 documents with
// the seed's texts. Options come from the config section `provenance`. Each route authenticates
// (the server's one access rule, worded as the seed says) and calls one function of
// src/provenance/operations.ts; what it throws is answered by the server's one error handler.
//
//   const app = await buildApp(ctx, { plugins: [provenancePlugin] });          // inside serve
//   await app.register(provenanceRoutes, { service, repositoryAccess });         // standalone (src/server.ts)

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { served, type FacePlugin } from './context.js';
import { authorize, sendRefusal, type RefusalWording } from './auth-plugin.js';
import type { Permission, Principal } from '../auth/types.js';
import { DETAILS, EXTERNAL_SERVICE_PREFIX } from '../provenance/errors.js';
import { evaluatePolicyScan, fetchAttestation, publishAttestations, type ProvenanceApi } from '../provenance/operations.js';
import type { RequestBody } from '../provenance/request.js';

export { DETAILS };

export const NDJSON = 'application/x-ndjson';

export type ProvenanceRoutesOptions = ProvenanceApi;

type Params = Record<string, string>;

/** The seed's refusals: 401 (also for a missing permission) and 403 with its texts, type about:blank. */
const REFUSALS: RefusalWording = { missingPermission: 'unauthorized', unauthorizedDetail: DETAILS.unauthorized, problemType: 'about:blank' };

/** The principal when it may use the endpoint (the access rule every face shares); otherwise the refusal is sent. */
function permitted(request: FastifyRequest, reply: FastifyReply, permission: Permission): Principal | undefined {
  const decision = authorize(request, permission);
  if (decision.kind === 'allowed') return decision.principal;
  sendRefusal(reply, decision, REFUSALS);
  return undefined;
}

/** The body as the service reads it: its text, and its multipart parts when it has them. */
function bodyOf(request: FastifyRequest): RequestBody {
  return {
    contentType: request.headers['content-type'] ?? '',
    text: typeof request.body === 'string' ? request.body : '',
    parts: async function* () {
      for await (const part of request.parts()) {
        yield { name: part.fieldname, value: part.type === 'field' ? part.value : (await part.toBuffer()).toString('utf8') };
      }
    },
  };
}

function wantsNdjson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    return type === NDJSON && !params.some((x) => /^\s*q=0(\.0*)?\s*$/.test(x));
  });
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

export const provenanceRoutes: FastifyPluginAsync<ProvenanceRoutesOptions> = async (app: FastifyInstance, api) => {
  const { service } = api;

  // Bodies are read as text (or as multipart parts) and parsed by the service, so that a body it
  // cannot read is the seed's 400 with a reason, whatever the encoding.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  await app.register(multipart, { limits: { fields: 1000, fileSize: 1024 * 1024, files: 100, parts: 1100 } });
  // Every problem document of these routes has the type about:blank (the one error handler reads it).
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object), problemType: 'about:blank' };
  });

  const publish = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'publishAttestations');
    if (!principal) return reply;
    return sendResults(request, reply, await publishAttestations(api, principal, request.params, bodyOf(request)));
  };

  const evaluate = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'evaluatePolicies');
    if (!principal) return reply;
    return sendResults(request, reply, await evaluatePolicyScan(api, principal, request.params, bodyOf(request)));
  };

  const fetchOne = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const principal = permitted(request, reply, 'readAttestations');
    if (!principal) return reply;
    const envelope = await fetchAttestation(api, principal, request.params);
    if (wantsNdjson(request)) return reply.code(200).type(NDJSON).send(`${JSON.stringify(envelope)}\n`);
    return reply.code(200).type('application/json').send(envelope);
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

/**
 * The provenance face of `buildscope serve`: the service reads builds from the server's own store;
 * it is opened by the composition root (src/http/services.ts), as the standalone service's is by
 * `openProvenanceServer` (src/server.ts).
 */
export const provenancePlugin: FacePlugin = async (app, { provenance, faces }) => {
  await app.register(provenanceRoutes, { service: served(provenance, 'provenance'), repositoryAccess: faces.provenance.repositoryAccess });
};
