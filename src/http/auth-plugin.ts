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
import { PERMISSIONS, type AuthResult, type Permission, type Principal } from '../auth/types.js';
import { sendProblem } from './problem.js';
import { assertNever } from '../query/assert.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking: set for every request before routing completes (onRequest). */
    auth: AuthResult;
  }
}

/** The challenge sent with every 401. Only Bearer: a Basic challenge makes browsers prompt. */
export const WWW_AUTHENTICATE = 'Bearer realm="buildscope"';

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
 * any valid credentials). The faces differ only in how a refusal is written (sendRefusal here;
 * the export API adds its CORS headers, the provenance service answers 401 as its seed says).
 */
export type AccessDecision =
  | { readonly kind: 'allowed'; readonly principal: Principal }
  | { readonly kind: 'unauthenticated'; readonly detail: string; readonly challenge: string }
  | { readonly kind: 'forbidden'; readonly permission: Permission; readonly detail: string };

export type Refusal = Exclude<AccessDecision, { kind: 'allowed' }>;

export function decideAccess(auth: AuthResult, permission: Permission | null): AccessDecision {
  switch (auth.kind) {
    case 'anonymous':
      return { kind: 'unauthenticated', detail: 'Authentication required: send Authorization: Bearer <access key or access token> (or Basic user:password)', challenge: WWW_AUTHENTICATE };
    case 'rejected':
      return { kind: 'unauthenticated', detail: `Authentication failed: ${auth.reason}`, challenge: `${WWW_AUTHENTICATE}, error="invalid_token"` };
    case 'authenticated':
      if (permission !== null && !auth.principal.permissions.has(permission)) {
        return { kind: 'forbidden', permission, detail: `This operation needs the permission '${permission}' (${PERMISSIONS[permission]})` };
      }
      return { kind: 'allowed', principal: auth.principal };
    default:
      return assertNever(auth, 'auth result');
  }
}

/** Answers a refusal: 401 with its challenge, or 403 naming the permission; `headers` go on both. */
export function sendRefusal(reply: FastifyReply, refusal: Refusal, headers: Record<string, string> = {}): FastifyReply {
  reply.headers(headers);
  switch (refusal.kind) {
    case 'unauthenticated':
      reply.header('www-authenticate', refusal.challenge);
      return sendProblem(reply, 401, refusal.detail);
    case 'forbidden':
      return sendProblem(reply, 403, refusal.detail, { permission: refusal.permission });
    default:
      return assertNever(refusal, 'refusal');
  }
}

/** Answers 401 and returns false unless the request carries valid credentials. */
export function ensureAuthenticated(request: FastifyRequest, reply: FastifyReply): request is FastifyRequest & { auth: { kind: 'authenticated'; principal: Principal } } {
  const decision = decideAccess(request.auth, null);
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
    const decision = decideAccess(request.auth, permission);
    if (decision.kind !== 'allowed') return sendRefusal(reply, decision);
    return undefined;
  };
}

/** The principal of a request that passed requirePermission. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.auth.kind !== 'authenticated') throw new Error('principalOf() used on a route without requirePermission');
  return request.auth.principal;
}
