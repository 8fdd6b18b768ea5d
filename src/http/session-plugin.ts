// Browser sessions for the web pages: sign in with a user name and password or an access key,
// get a session cookie; sign out. The cookie holds an access token of src/auth (the same signed
// token as POST /api/auth/token issues, with the credential's permissions and projects), so every
// route that honours tokens honours the session, and several server processes share sessions.
//
//   Cookie bs_session: HttpOnly, SameSite=Strict, Path=/, Max-Age = the token's lifetime, and
//   Secure when the request came over HTTPS (directly or as X-Forwarded-Proto says).
//   Cookie bs_csrf: a random value the page reads and sends back as X-CSRF-Token on every
//   request that changes something (double submit): a request authenticated by the session
//   cookie with another method than GET/HEAD/OPTIONS and without the matching header is refused.
//
// An Authorization header always wins over the cookie.
//
// The session's token is bound to the credential it was opened with (the access key, or the
// user's current password; src/auth/binding.ts): the authenticator checks that credential in the
// database whenever its 5-second cache of the token runs out, so revoking the key, changing the
// password or removing the user ends the session (and the tokens made with it) within those 5 s,
// in every server process. Wrong passwords are limited per user name and address before hashing
// (src/auth/sign-in-limits.ts): 429 with Retry-After.

import { BadRequestError, TooManyRequestsError } from '../errors/domain.js';
import { InternalError } from '../query/assert.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { PERMISSION_NAMES, type Principal } from '../auth/types.js';
import type { FacePluginOptions } from './context.js';
import { sendUnauthorized } from './auth-plugin.js';
import { PROBLEM_RESPONSES } from './api/schemas.js';

export const SESSION_COOKIE = 'bs_session';
export const CSRF_COOKIE = 'bs_csrf';
export const CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts at most (it never outlives the credential it was opened with). */
export const SESSION_TTL_MS = 8 * 3_600_000;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function overHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  return request.protocol === 'https' || (typeof forwarded === 'string' && forwarded.split(',')[0]!.trim() === 'https');
}

function sessionView(p: Principal, csrfToken: string | null) {
  return {
    user: p.user,
    credential: p.credential,
    permissions: [...p.permissions].sort(),
    projects: p.projects,
    expiresAt: p.expiresAt,
    ...(csrfToken !== null ? { csrfToken } : {}),
  };
}

const SESSION_SCHEMA = {
  type: 'object',
  properties: {
    user: { type: 'string' },
    credential: { type: 'string', enum: ['password', 'accessKey', 'token'] },
    permissions: { type: 'array', items: { type: 'string', enum: PERMISSION_NAMES } },
    projects: { type: ['array', 'null'], items: { type: 'string' }, description: 'Projects whose builds the user sees; null: all' },
    expiresAt: { type: ['integer', 'null'], description: 'Epoch ms at which the session ends' },
    csrfToken: { type: 'string', description: 'Send as X-CSRF-Token with every request that is not GET, HEAD or OPTIONS' },
  },
  required: ['user', 'credential', 'permissions', 'projects', 'expiresAt'],
} as const;

export const sessionPlugin: FastifyPluginAsync<FacePluginOptions> = async (app, { ctx, auth }) => {
  const clock = ctx.clock ?? Date.now;
  await app.register(fastifyCookie);

  // After the Authorization header was read (auth-plugin.ts): a request without one may carry
  // the session cookie.
  app.addHook('onRequest', async (request) => {
    if (request.auth.kind !== 'anonymous') return;
    const token = request.cookies[SESSION_COOKIE];
    if (token === undefined || token === '') return;
    const result = await auth.authenticator.authenticate(`Bearer ${token}`);
    if (result.kind !== 'authenticated') {
      const why = result.kind === 'rejected' ? ` (${result.reason})` : '';
      request.auth = { kind: 'rejected', reason: `the session has ended${why}; sign in again` };
      return;
    }
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers[CSRF_HEADER];
      const expected = request.cookies[CSRF_COOKIE];
      if (typeof sent !== 'string' || expected === undefined || !sameToken(sent, expected)) {
        request.auth = { kind: 'rejected', reason: `a request made with the session cookie must send the ${CSRF_HEADER} header` };
        return;
      }
    }
    request.auth = result;
  });

  const clearCookies = (reply: FastifyReply, secure: boolean) => {
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure });
    reply.clearCookie(CSRF_COOKIE, { path: '/', sameSite: 'strict', secure });
  };

  app.post<{ Body: { user?: string; password?: string; accessKey?: string } }>(
    '/api/session',
    {
      schema: {
        summary: 'Sign in',
        description:
          'Opens a browser session with a user name and password or with an access key: sets the HttpOnly, SameSite=Strict session cookie (Secure over HTTPS) and a CSRF cookie whose value is also returned as csrfToken. The session ends after 8 hours, or earlier when the access key expires; and within 5 seconds of the access key being revoked, the password being changed or the user being removed. Too many wrong passwords for a user name from one address, or from one address in all, answer 429 with Retry-After.',
        tags: ['web'],
        operationId: 'signIn',
        security: [],
        body: {
          type: 'object',
          properties: {
            user: { type: 'string', minLength: 1, maxLength: 200 },
            password: { type: 'string', maxLength: 1000 },
            accessKey: { type: 'string', minLength: 1, maxLength: 1000 },
          },
          additionalProperties: false,
        },
        response: { 200: SESSION_SCHEMA, ...PROBLEM_RESPONSES([400, 401, 429]) },
      },
    },
    async (request, reply) => {
      const { user, password, accessKey } = request.body ?? {};
      let header: string;
      if (accessKey !== undefined && user === undefined && password === undefined) header = `Bearer ${accessKey}`;
      else if (user !== undefined && password !== undefined && accessKey === undefined) header = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      else throw new BadRequestError('Send either user and password, or accessKey');
      const result = await auth.authenticator.authenticate(header, request.ip);
      if (result.kind === 'rejected' && result.retryAfterSeconds !== undefined) {
        throw new TooManyRequestsError(`Sign-in refused: ${result.reason}`, { retryAfterSeconds: result.retryAfterSeconds });
      }
      if (result.kind !== 'authenticated') {
        return sendUnauthorized(reply, accessKey !== undefined ? 'The access key is unknown or has expired' : 'Wrong user name or password');
      }
      const p = result.principal;
      // What the session stands on: a key or password principal always names it.
      if (p.binding === undefined) throw new InternalError(`a ${p.credential} principal without its credential binding`);
      const expiresAt = Math.min(clock() + SESSION_TTL_MS, p.expiresAt ?? Infinity);
      const token = await auth.tokens.issue({ user: p.user, permissions: [...p.permissions], projects: p.projects, expiresAt, binding: p.binding });
      const csrf = randomBytes(24).toString('base64url');
      const secure = overHttps(request);
      const maxAge = Math.max(1, Math.floor((expiresAt - clock()) / 1000));
      reply.setCookie(SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'strict', secure, maxAge });
      reply.setCookie(CSRF_COOKIE, csrf, { path: '/', sameSite: 'strict', secure, maxAge });
      request.log.info({ user: p.user, credential: p.credential }, 'signed in');
      return sessionView({ ...p, expiresAt }, csrf);
    },
  );

  app.get(
    '/api/session',
    {
      schema: {
        summary: 'Who is signed in',
        description:
          'The user of the session cookie (or of the Authorization header), their permissions and projects; 204 when nobody is signed in (not 401: a page asks this on every load, and a signed-out visitor is not an error); 401 when the credentials sent are wrong or the session has ended.',
        tags: ['web'],
        operationId: 'getSession',
        response: { 200: SESSION_SCHEMA, 204: { type: 'null', description: 'Nobody is signed in' }, ...PROBLEM_RESPONSES([401, 429]) },
      },
    },
    async (request, reply) => {
      if (request.auth.kind === 'anonymous') return reply.code(204).send();
      if (request.auth.kind === 'rejected' && request.auth.retryAfterSeconds !== undefined) {
        throw new TooManyRequestsError(`Authentication refused: ${request.auth.reason}`, { retryAfterSeconds: request.auth.retryAfterSeconds });
      }
      if (request.auth.kind === 'rejected') {
        // An ended session: forget its cookies too.
        if (request.headers.authorization === undefined) clearCookies(reply, overHttps(request));
        return sendUnauthorized(reply, `Authentication failed: ${request.auth.reason}`);
      }
      return sessionView(request.auth.principal, request.cookies[CSRF_COOKIE] ?? null);
    },
  );

  app.delete(
    '/api/session',
    {
      schema: {
        summary: 'Sign out',
        description: 'Removes the session cookies. Needs the X-CSRF-Token header when the session cookie is sent.',
        tags: ['web'],
        operationId: 'signOut',
        response: { 204: { type: 'null', description: 'Signed out' }, ...PROBLEM_RESPONSES([401]) },
      },
    },
    async (request, reply) => {
      // A forged sign-out (no CSRF header) is refused like any other change.
      if (request.auth.kind === 'rejected' && request.cookies[SESSION_COOKIE] !== undefined && request.headers.authorization === undefined) {
        if (request.auth.reason.includes(CSRF_HEADER)) return sendUnauthorized(reply, `Authentication failed: ${request.auth.reason}`);
      }
      clearCookies(reply, overHttps(request));
      return reply.code(204).send();
    },
  );
};

// Not encapsulated: the cookie parser and the session hook apply to every route of the server.
(sessionPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
