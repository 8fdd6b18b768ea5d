// From an Authorization header to an AuthResult. Schemes:
//   Basic base64(user:password)        password of a user
//   Bearer <access key>                 long-lived key (stored only as a hash)
//   Bearer base64(<access key>)         as some export clients send it
//   Bearer <JWT>                        access token from POST /api/auth/token
// Successes are remembered for a few seconds (AuthCache), keyed by a hash of the credential, so a
// client sending the same credential again pays neither the database, the signature nor scrypt.

import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { AuthResult, Principal } from './types.js';
import { isPermission } from './types.js';
import { AuthCache, type AuthCacheOptions } from './cache.js';
import { dummyHash, verifyPassword } from './password.js';
import { HashGate, Suspects } from './hash-gate.js';
import type { TokenService } from './tokens.js';
import { hashAccessKey, isAccessKeyShape, type UserStore } from './users.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BASE64_SHAPE = /^[A-Za-z0-9+/_-]+={0,2}$/;

export interface Authenticator {
  /** `client`: the caller's address, so that password checks of clients that fail wait behind the others. */
  authenticate(header: string | undefined, client?: string): Promise<AuthResult>;
}

const ANONYMOUS: AuthResult = { kind: 'anonymous' };

function rejected(reason: string): AuthResult {
  return { kind: 'rejected', reason };
}

function authenticated(principal: Principal): AuthResult {
  return { kind: 'authenticated', principal };
}

/**
 * Password checks waiting for a key derivation; beyond this a Basic request is refused at once.
 * Generous: the bound that matters is the derivations running at once (half the thread pool), so
 * that file reads and gzip keep threads whatever the number of clients sending passwords.
 */
const MAX_QUEUED_PASSWORD_CHECKS = 1024;

export function createAuthenticator(
  users: UserStore,
  tokens: TokenService,
  clock: () => number = Date.now,
  cacheOptions: AuthCacheOptions = {},
  gate: HashGate = new HashGate({ maxQueued: MAX_QUEUED_PASSWORD_CHECKS }),
): Authenticator {
  const cache = new AuthCache(cacheOptions, clock);
  // Passwords are low-entropy: their cache key is keyed with a secret of this process, so a
  // memory dump of the cache does not allow a fast offline guess of the passwords behind it.
  const passwordKey = randomBytes(32);
  const suspects = new Suspects();

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
    const user = name === '' ? undefined : await users.getUser(name).catch(() => undefined);
    const hash = user?.passwordHash ?? (await dummyHash());
    const who = client === undefined ? [`user:${name}`] : [`user:${name}`, `client:${client}`];
    const checked = await gate.run(() => verifyPassword(password, hash), undefined, suspects.priority(who));
    if (checked.kind !== 'ran') return rejected('too many password checks under way; retry shortly');
    if (!user || !user.passwordHash || !checked.value) {
      suspects.failedNow(who);
      return rejected('wrong user name or password');
    }
    const principal: Principal = {
      user: user.name,
      credential: 'password',
      permissions: new Set(user.permissions),
      projects: user.projects,
      expiresAt: null,
    };
    cache.set(cacheKey, principal);
    return authenticated(principal);
  }

  async function bearer(value: string): Promise<AuthResult> {
    if (JWT_SHAPE.test(value)) {
      const cacheKey = 'j:' + createHash('sha256').update(value).digest('base64');
      const cached = cache.get(cacheKey);
      if (cached !== undefined) return authenticated(cached);
      const check = await tokens.verify(value);
      if (!check.ok) return rejected(check.reason);
      const c = check.claims;
      const principal: Principal = { user: c.user, credential: 'token', permissions: new Set(c.permissions), projects: c.projects, expiresAt: c.expiresAt };
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
