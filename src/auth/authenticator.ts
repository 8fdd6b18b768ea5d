// From an Authorization header to an AuthResult. Schemes:
//   Basic base64(user:password)        password of a user
//   Bearer <access key>                 long-lived key (stored only as a hash)
//   Bearer base64(<access key>)         as some export clients send it
//   Bearer <JWT>                        access token from POST /api/auth/token
// Successes are remembered for a few seconds (AuthCache), keyed by a hash of the credential, so a
// client sending the same credential again pays neither the database, the signature nor scrypt.
// A token bound to a credential (a browser session's, binding.ts) is checked against the database
// on every verification the cache does not answer, so it ends within the cache's lifetime of its
// credential. Password tries are limited per user name and client before any hashing
// (sign-in-limits.ts).

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { setTimeout as pause } from 'node:timers/promises';
import { assertNever } from '../query/assert.js';
import type { AuthResult, Principal } from './types.js';
import { isPermission } from './types.js';
import { AuthCache, type AuthCacheOptions } from './cache.js';
import { dummyHash, verifyPassword } from './password.js';
import { HashGate } from './hash-gate.js';
import { checkBinding, narrowToUser, passwordFingerprint } from './binding.js';
import { SignInLimiter, type CheckOutcome, type LimitScope } from './sign-in-limits.js';
import type { TokenService } from './tokens.js';
import { hashAccessKey, isAccessKeyShape, type UserStore } from './users.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BASE64_SHAPE = /^[A-Za-z0-9+/_-]+={0,2}$/;

export interface Authenticator {
  /**
   * `client`: the caller's address, by which failed password checks are limited and the checks of
   * clients that failed wait behind the others.
   */
  authenticate(header: string | undefined, client?: string): Promise<AuthResult>;
}

const ANONYMOUS: AuthResult = { kind: 'anonymous' };

function rejected(reason: string): AuthResult {
  return { kind: 'rejected', reason };
}

function authenticated(principal: Principal): AuthResult {
  return { kind: 'authenticated', principal };
}

function limited(scope: LimitScope, retryAfterSeconds: number): AuthResult {
  switch (scope) {
    case 'userAndClient':
      return { kind: 'rejected', reason: `too many failed sign-ins for this user name from this address; retry in ${retryAfterSeconds} s`, retryAfterSeconds };
    case 'client':
      return { kind: 'rejected', reason: `too many failed sign-ins from this address; retry in ${retryAfterSeconds} s`, retryAfterSeconds };
    default:
      return assertNever(scope, 'limit scope');
  }
}

/**
 * A try refused by the sign-in limits is answered after this pause. A refusal costs the server
 * almost nothing, so a client that sends its next guess as soon as it hears 429 would otherwise
 * turn refusals into a stream of requests that takes the processor from everyone else (a wrong
 * password used to cost it a queued key derivation, which slowed it down by itself).
 */
const LIMITED_PAUSE_MS = 500;

/**
 * Password checks waiting for a key derivation; beyond this a Basic request is refused at once.
 * Generous: the bound that matters is the derivations running at once (half the thread pool), so
 * that file reads and gzip keep threads whatever the number of clients sending passwords.
 */
const MAX_QUEUED_PASSWORD_CHECKS = 1024;

/** The gate of a server's password checks (one per server: every face's checks share it). */
export function passwordCheckGate(): HashGate {
  return new HashGate({ maxQueued: MAX_QUEUED_PASSWORD_CHECKS });
}

export function createAuthenticator(
  users: UserStore,
  tokens: TokenService,
  clock: () => number = Date.now,
  cacheOptions: AuthCacheOptions = {},
  gate: HashGate = passwordCheckGate(),
  limiter: SignInLimiter = new SignInLimiter(undefined, clock),
): Authenticator {
  const cache = new AuthCache(cacheOptions, clock);
  // Passwords are low-entropy: their cache key is keyed with a secret of this process, so a
  // memory dump of the cache does not allow a fast offline guess of the passwords behind it.
  const passwordKey = randomBytes(32);

  async function basic(credentials: string, client: string | undefined): Promise<AuthResult> {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (!BASE64_SHAPE.test(credentials) || colon < 0) return rejected('malformed Basic credentials');
    // user:password split at the first colon, so the decoded string names the pair unambiguously.
    const cacheKey = 'b:' + createHmac('sha256', passwordKey).update(decoded).digest('base64');
    const cached = cache.get(cacheKey);
    if (cached !== undefined) return authenticated(cached);
    const name = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    // Refused before the database and scrypt: a limited guesser costs nothing.
    const admission = limiter.admit(name, client);
    if (admission.kind === 'wait') {
      await pause(LIMITED_PAUSE_MS);
      return limited(admission.scope, admission.retryAfterSeconds);
    }
    let outcome: CheckOutcome = 'unchecked';
    try {
      const user = name === '' ? undefined : await users.getUser(name).catch(() => undefined);
      const hash = user?.passwordHash ?? (await dummyHash());
      const checked = await gate.run(() => verifyPassword(password, hash), undefined, admission.priority);
      if (checked.kind !== 'ran') return { kind: 'rejected', reason: 'too many password checks under way; retry shortly', retryAfterSeconds: 1 };
      if (!user || !user.passwordHash || !checked.value) {
        outcome = 'failed';
        return rejected('wrong user name or password');
      }
      outcome = 'succeeded';
      const principal: Principal = {
        user: user.name,
        credential: 'password',
        permissions: new Set(user.permissions),
        projects: user.projects,
        expiresAt: null,
        binding: { kind: 'password', fingerprint: passwordFingerprint(user.passwordHash) },
      };
      cache.set(cacheKey, principal);
      return authenticated(principal);
    } finally {
      admission.done(outcome);
    }
  }

  async function bearer(value: string): Promise<AuthResult> {
    if (JWT_SHAPE.test(value)) {
      const cacheKey = 'j:' + createHash('sha256').update(value).digest('base64');
      const cached = cache.get(cacheKey);
      if (cached !== undefined) return authenticated(cached);
      const check = await tokens.verify(value);
      if (!check.ok) return rejected(check.reason);
      const c = check.claims;
      let principal: Principal = { user: c.user, credential: 'token', permissions: new Set(c.permissions), projects: c.projects, expiresAt: c.expiresAt };
      if (c.binding !== undefined) {
        // From the database, not from the cache's entry of the key or password: an entry of
        // those may be seconds old already, and this one lives the cache's whole lifetime again.
        const bound = await checkBinding(users, c.user, c.binding, clock());
        if (bound.kind === 'ended') return rejected(bound.reason);
        principal = { ...narrowToUser(principal, bound.user), binding: c.binding };
      }
      cache.set(cacheKey, principal);
      return authenticated(principal);
    }
    let key: string | undefined;
    if (isAccessKeyShape(value)) key = value;
    else if (BASE64_SHAPE.test(value)) {
      const decoded = Buffer.from(value, 'base64').toString('utf8').trim();
      if (isAccessKeyShape(decoded)) key = decoded;
    }
    if (key === undefined) return rejected('unknown access key');
    // The stored hash doubles as the cache key: the same key, plain or base64, is one entry.
    const keyHash = hashAccessKey(key);
    const cacheKey = 'k:' + keyHash;
    const cached = cache.get(cacheKey);
    if (cached !== undefined) return authenticated(cached);
    const found = await users.findAccessKeyHash(keyHash);
    if (!found) return rejected('unknown access key');
    if (found.expiresAt <= clock()) return rejected('access key expired');
    const u = found.user;
    const principal: Principal = {
      user: u.name,
      credential: 'accessKey',
      permissions: new Set(u.permissions.filter(isPermission)),
      projects: u.projects,
      expiresAt: found.expiresAt,
      binding: { kind: 'accessKey', keyHash },
    };
    cache.set(cacheKey, principal);
    return authenticated(principal);
  }

  return {
    async authenticate(header, client) {
      if (header === undefined || header.trim() === '') return ANONYMOUS;
      const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
      if (!m) return rejected('malformed Authorization header');
      const scheme = m[1]!.toLowerCase();
      if (scheme === 'basic') return basic(m[2]!, client);
      if (scheme === 'bearer') return bearer(m[2]!);
      return rejected(`unsupported authorization scheme '${m[1]}' (use Basic or Bearer)`);
    },
  };
}
