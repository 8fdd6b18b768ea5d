// Authentication for every HTTP face: each request gets `request.auth` (an AuthResult) before any
// route runs; routes guard themselves with `preHandler: requirePermission('...')`.
//
//   app.get('/x', { preHandler: requirePermission('exportData') }, async (request) => {
//     const principal = principalOf(request);   // authenticated here
//     ... visibilityOf(principal) ...
//   });

import type { FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator.js';
import { PERMISSIONS, visibilityOf, type AuthResult, type Permission, type Principal } from '../auth/types.js';
import type { Visibility } from '../store/types.js';
import { sendBlankProblem, sendProblem } from './problem.js';
import { assertNever } from '../query/assert.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking: set for every request before routing completes (onRequest). */
    auth: AuthResult;
  }
}

/**
 * The challenge sent with every 401 of every face of the server (REST, web app, export streams,
 * provenance, operations). Only Bearer: a Basic challenge makes browsers prompt for a password
 * over the web app's own sign-in. Basic credentials are accepted all the same.
 */
export const WWW_AUTHENTICATE = 'Bearer realm="buildscope"';

/** Why a 401: no credentials, or credentials that were refused (RFC 6750 `invalid_token`). */
export type Unauthenticated = 'missing' | 'rejected';

/** The WWW-Authenticate header of a 401: one function, so that every face sends the same. */
export function challengeOf(why: Unauthenticated): string {
  switch (why) {
    case 'missing':
      return WWW_AUTHENTICATE;
    case 'rejected':
      return `${WWW_AUTHENTICATE}, error="invalid_token"`;
    default:
      return assertNever(why, 'reason of a 401');
  }
}

export function authPlugin(authenticator: Authenticator): FastifyPluginAsync {
  // fastify-plugin: not encapsulated, so the hook and decorator apply to every route of the app.
  return fp(
    async (app) => {
      app.decorateRequest('auth', null as never);
      app.addHook('onRequest', async (request) => {
        request.auth = await authenticator.authenticate(request.headers.authorization, request.ip);
      });
    },
    { name: 'buildscope-auth' },
  );
}

/**
 * The one access rule of every face: whether the request's credentials hold `permission` (null:
 * any valid credentials), and for whom: the principal, and the visibility its projects give in
 * the store. Every face calls authorize (or requirePermission, its preHandler form) and answers a
 * refusal with sendRefusal; the faces differ only in the wording of a refusal (RefusalWording:
 * the export API adds its CORS headers, the provenance service answers 401 with its seed's texts).
 */
export type AccessDecision =
  | { readonly kind: 'allowed'; readonly principal: Principal; readonly visibility: Visibility }
  | { readonly kind: 'unauthenticated'; readonly detail: string; readonly why: Unauthenticated }
  /** Too many failed password tries: the credentials were not checked (429 with Retry-After). */
  | { readonly kind: 'throttled'; readonly detail: string; readonly retryAfterSeconds: number }
  | { readonly kind: 'forbidden'; readonly permission: Permission; readonly detail: string };

export type Refusal = Exclude<AccessDecision, { kind: 'allowed' }>;

export function decideAccess(auth: AuthResult, permission: Permission | null): AccessDecision {
  switch (auth.kind) {
    case 'anonymous':
      return { kind: 'unauthenticated', detail: 'Authentication required: send Authorization: Bearer <access key or access token> (or Basic user:password)', why: 'missing' };
    case 'rejected':
      if (auth.retryAfterSeconds !== undefined) return { kind: 'throttled', detail: `Authentication refused: ${auth.reason}`, retryAfterSeconds: auth.retryAfterSeconds };
      return { kind: 'unauthenticated', detail: `Authentication failed: ${auth.reason}`, why: 'rejected' };
    case 'authenticated':
      if (permission !== null && !auth.principal.permissions.has(permission)) {
        return { kind: 'forbidden', permission, detail: `This operation needs the permission '${permission}' (${PERMISSIONS[permission]})` };
      }
      return { kind: 'allowed', principal: auth.principal, visibility: visibilityOf(auth.principal) };
    default:
      return assertNever(auth, 'auth result');
  }
}

/** The access decision of a request; a face served without the auth plugin sees everyone as anonymous. */
export function authorize(request: FastifyRequest, permission: Permission | null): AccessDecision {
  return decideAccess((request as { auth?: AuthResult }).auth ?? { kind: 'anonymous' }, permission);
}

/** How a face words its refusals. The server's own: 401 or 403 with a detail that says why. */
export interface RefusalWording {
  /** Headers sent with every refusal (the export API's CORS headers). */
  readonly headers?: Readonly<Record<string, string>>;
  /** A missing permission is a 401 (the provenance seed), not a 403. */
  readonly missingPermission?: 'forbidden' | 'unauthorized';
  /** The detail of every 401, instead of the reason (the provenance seed's fixed text). */
  readonly unauthorizedDetail?: string;
  /** The problem type `about:blank` (the provenance seed) instead of the server's URNs. */
  readonly problemType?: 'about:blank';
}

/** Answers a refusal: 401 with the challenge (challengeOf), 429 with Retry-After, or 403 naming the permission. */
export function sendRefusal(reply: FastifyReply, refusal: Refusal, wording: RefusalWording = {}): FastifyReply {
  reply.headers({ ...wording.headers });
  const send = wording.problemType === 'about:blank' ? sendBlankProblem : sendProblem;
  switch (refusal.kind) {
    case 'unauthenticated':
      reply.header('www-authenticate', challengeOf(refusal.why));
      return send(reply, 401, wording.unauthorizedDetail ?? refusal.detail);
    case 'throttled':
      reply.header('retry-after', String(refusal.retryAfterSeconds));
      return send(reply, 429, refusal.detail);
    case 'forbidden':
      if (wording.missingPermission === 'unauthorized') {
        reply.header('www-authenticate', challengeOf('missing'));
        return send(reply, 401, wording.unauthorizedDetail ?? refusal.detail);
      }
      return send(reply, 403, refusal.detail, { permission: refusal.permission });
    default:
      return assertNever(refusal, 'refusal');
  }
}

/**
 * A 401 of a route that checks credentials itself (signing in, asking for an access token): the
 * same challenge as every other 401.
 */
export function sendUnauthorized(reply: FastifyReply, detail: string, why: Unauthenticated = 'rejected'): FastifyReply {
  return sendRefusal(reply, { kind: 'unauthenticated', detail, why });
}

/** Answers 401 and returns false unless the request carries valid credentials. */
export function ensureAuthenticated(request: FastifyRequest, reply: FastifyReply): request is FastifyRequest & { auth: { kind: 'authenticated'; principal: Principal } } {
  const decision = authorize(request, null);
  if (decision.kind === 'allowed') return true;
  sendRefusal(reply, decision);
  return false;
}

/**
 * preHandler: 401 for missing or wrong credentials, 403 when the principal lacks `permission`
 * (pass null to require only valid credentials).
 */
export function requirePermission(permission: Permission | null): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    const decision = authorize(request, permission);
    if (decision.kind !== 'allowed') return sendRefusal(reply, decision);
    return undefined;
  };
}

/** The principal of a request that passed requirePermission. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.auth.kind !== 'authenticated') throw new Error('principalOf() used on a route without requirePermission');
  return request.auth.principal;
}
