// The auth component: users, access keys, tokens and the authenticator over one database.

import type { ServerConfig } from '../config.js';
import { migrate, type DatabaseHandle } from '../db/database.js';
import { createAuthenticator, passwordCheckGate, type Authenticator } from './authenticator.js';
import type { HashGate } from './hash-gate.js';
import type { AuthCacheOptions } from './cache.js';
import { SignInLimiter } from './sign-in-limits.js';
import { AUTH_MIGRATIONS } from './migrations.js';
import { loadSigningSecret, TokenService } from './tokens.js';
import { UserStore } from './users.js';

export { createAuthenticator, type Authenticator } from './authenticator.js';
export { AuthCache, DEFAULT_AUTH_CACHE_TTL_MS, DEFAULT_AUTH_CACHE_ENTRIES, type AuthCacheOptions } from './cache.js';
export { TokenService, type TokenClaims } from './tokens.js';
export { UserStore, UserError, type User } from './users.js';
export { decideToken, splitList, type TokenRequest, type TokenDecision } from './token-request.js';
export { SignInLimiter, DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from './sign-in-limits.js';
export * from './types.js';

export interface Auth {
  readonly users: UserStore;
  readonly tokens: TokenService;
  readonly authenticator: Authenticator;
  /** The gate every password check of `authenticator` waits at (its counters say how many ran). */
  readonly passwordGate: HashGate;
}

/**
 * Migrates the auth tables, loads the token signing secret and wires the authenticator (which
 * reuses successful authentications for `cache.ttlMs`, default 5 s; `{ ttlMs: 0 }` disables that;
 * sessions end within the same time of their credential) with the sign-in limits of
 * `config.auth.signInLimits`.
 */
export async function openAuth(database: DatabaseHandle, config: ServerConfig, clock: () => number = Date.now, cache: AuthCacheOptions = {}): Promise<Auth> {
  await migrate(database, 'auth', AUTH_MIGRATIONS);
  const secret = await loadSigningSecret(database, config.auth.signingKeys);
  const users = new UserStore(database, clock);
  const tokens = new TokenService(secret, config.server.hostname, clock);
  const limiter = new SignInLimiter(config.auth.signInLimits, clock);
  const passwordGate = passwordCheckGate();
  return { users, tokens, authenticator: createAuthenticator(users, tokens, clock, cache, passwordGate, limiter), passwordGate };
}
