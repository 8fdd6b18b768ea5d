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
        request.auth = await authenticator.authenticate(request.headers.authorization);
      });
    },
    { name: 'buildscope-auth' },
  );
}

/** Answers 401 and returns false unless the request carries valid credentials. */
export function ensureAuthenticated(request: FastifyRequest, reply: FastifyReply): request is FastifyRequest & { auth: { kind: 'authenticated'; principal: Principal } } {
  const auth = request.auth;
  switch (auth.kind) {
    case 'authenticated':
      return true;
    case 'anonymous':
      reply.header('www-authenticate', WWW_AUTHENTICATE);
      sendProblem(reply, 401, 'Authentication required: send Authorization: Bearer <access key or access token> (or Basic user:password)');
      return false;
    case 'rejected':
      reply.header('www-authenticate', `${WWW_AUTHENTICATE}, error="invalid_token"`);
      sendProblem(reply, 401, `Authentication failed: ${auth.reason}`);
      return false;
    default: {
      const never: never = auth;
      throw new Error(`Unknown auth result ${JSON.stringify(never)}`);
    }
  }
}

/**
 * preHandler: 401 for missing or wrong credentials, 403 when the principal lacks `permission`
 * (pass null to require only valid credentials).
 */
export function requirePermission(permission: Permission | null): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    if (!ensureAuthenticated(request, reply)) return reply;
    const principal = request.auth.principal;
    if (permission !== null && !principal.permissions.has(permission)) {
      return sendProblem(reply, 403, `This operation needs the permission '${permission}' (${PERMISSIONS[permission]})`, { permission });
    }
    return undefined;
  };
}

/** The principal of a request that passed requirePermission. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.auth.kind !== 'authenticated') throw new Error('principalOf() used on a route without requirePermission');
  return request.auth.principal;
}
