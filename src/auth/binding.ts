// Sessions stand on the credential they were opened with (CredentialBinding in types.ts). The
// binding travels in the token as the claim `cred` and is checked against the database whenever
// the authenticator verifies such a token without a cached success, so a session ends within the
// authentication cache's lifetime of the key being revoked, the password changed or the user
// removed, in every server process (each reads the shared database).

import { createHash } from 'node:crypto';
import { assertNever } from '../query/assert.js';
import type { CredentialBinding, Principal } from './types.js';
import type { User, UserStore } from './users.js';

/**
 * A fingerprint of a stored password hash. The stored hash is salted scrypt; this is 128 bits of
 * its SHA-256, so a token holder learns nothing that helps guess the password (the salt is not in
 * the token), and a new password (a new salt and hash) is a new fingerprint.
 */
export function passwordFingerprint(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('base64url').slice(0, 22);
}

const KEY_CLAIM = /^k\.([0-9a-f]{64})$/;
const PASSWORD_CLAIM = /^p\.([A-Za-z0-9_-]{22})$/;

/** The value of the `cred` claim. */
export function bindingClaim(binding: CredentialBinding): string {
  switch (binding.kind) {
    case 'accessKey':
      return `k.${binding.keyHash}`;
    case 'password':
      return `p.${binding.fingerprint}`;
    default:
      return assertNever(binding, 'credential binding');
  }
}

/** The binding a `cred` claim names; undefined when the claim is not one. */
export function parseBindingClaim(claim: unknown): CredentialBinding | undefined {
  if (typeof claim !== 'string') return undefined;
  const key = KEY_CLAIM.exec(claim);
  if (key) return { kind: 'accessKey', keyHash: key[1]! };
  const password = PASSWORD_CLAIM.exec(claim);
  if (password) return { kind: 'password', fingerprint: password[1]! };
  return undefined;
}

export type BindingCheck = { readonly kind: 'valid'; readonly user: User } | { readonly kind: 'ended'; readonly reason: string };

/** Whether the credential `user` opened the session with is still valid now: read from the database, never from memory. */
export async function checkBinding(users: UserStore, user: string, binding: CredentialBinding, now: number): Promise<BindingCheck> {
  switch (binding.kind) {
    case 'accessKey': {
      const found = await users.findAccessKeyHash(binding.keyHash);
      if (found === undefined || found.user.name !== user) return { kind: 'ended', reason: 'the access key the session was opened with was revoked' };
      if (found.expiresAt <= now) return { kind: 'ended', reason: 'the access key the session was opened with has expired' };
      return { kind: 'valid', user: found.user };
    }
    case 'password': {
      const found = await users.getUser(user);
      if (found === undefined) return { kind: 'ended', reason: 'the user of the session was removed' };
      if (found.passwordHash === null || passwordFingerprint(found.passwordHash) !== binding.fingerprint) {
        return { kind: 'ended', reason: 'the password the session was opened with was changed' };
      }
      return { kind: 'valid', user: found };
    }
    default:
      return assertNever(binding, 'credential binding');
  }
}

/**
 * A bound token's principal as its user stands now: never more than the token grants, and never
 * more than the user holds today (a permission or project taken from the user is taken from her
 * sessions too, within the same seconds as a revoked key).
 */
export function narrowToUser(principal: Principal, user: User): Principal {
  const held = new Set(user.permissions);
  const permissions = new Set([...principal.permissions].filter((p) => held.has(p)));
  let projects: readonly string[] | null;
  if (user.projects === null) projects = principal.projects;
  else if (principal.projects === null) projects = user.projects;
  else projects = principal.projects.filter((p) => user.projects!.includes(p));
  return { ...principal, permissions, projects };
}
