// Access control of the node: HTTP Basic against the hashed passwords of the configuration file.
// Deriving a scrypt key takes tens of milliseconds by design, so a successful check is remembered
// (by a SHA-256 of the header, never the password itself) until the configuration changes.

import { createHash } from 'node:crypto';
import type { AccessLevel, NodeConfig } from './config.js';
import { verifySecret, type ParsedHashedSecret } from './secret.js';

export const REALM = 'buildscope-cache-node';

export type Need = 'read' | 'readwrite';

export type AccessDecision =
  | { readonly kind: 'allow'; readonly user: string | null }
  /** 401: credentials missing (and anonymous access is not enough) or wrong. */
  | { readonly kind: 'unauthorized'; readonly detail: string }
  /** 403: valid credentials, or anonymous access, whose level is too low. */
  | { readonly kind: 'forbidden'; readonly detail: string };

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

export function parseBasic(header: string | undefined): BasicCredentials | null | 'malformed' {
  if (header === undefined || header === '') return null;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return 'malformed';
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function satisfies(level: AccessLevel, need: Need): boolean {
  return need === 'read' ? level === 'read' || level === 'readwrite' : level === 'readwrite';
}

/** Verifies passwords with a bounded memory of headers that already passed. */
export class PasswordChecker {
  private readonly passed = new Map<string, string>();

  /** Forget every remembered success (called when the configuration changes). */
  reset(): void {
    this.passed.clear();
  }

  /** The user for whom exactly this header already passed, if any. */
  remembered(header: string): string | undefined {
    return this.passed.get(createHash('sha256').update(header).digest('base64'));
  }

  async check(header: string, credentials: BasicCredentials, hashed: ParsedHashedSecret): Promise<boolean> {
    const id = createHash('sha256').update(header).digest('base64');
    if (this.passed.get(id) === credentials.username) return true;
    const ok = await verifySecret(credentials.password, hashed);
    if (ok) {
      if (this.passed.size >= 1000) this.passed.delete(this.passed.keys().next().value as string);
      this.passed.set(id, credentials.username);
    }
    return ok;
  }
}

export async function decideCacheAccess(config: NodeConfig, checker: PasswordChecker, header: string | undefined, need: Need): Promise<AccessDecision> {
  const creds = parseBasic(header);
  if (creds === 'malformed') return { kind: 'unauthorized', detail: 'The Authorization header is not valid HTTP Basic' };
  if (creds === null) {
    if (satisfies(config.anonymousLevel, need)) return { kind: 'allow', user: null };
    // Anonymous read but a write: credentials would help, so 401 (a client then sends them).
    return { kind: 'unauthorized', detail: `Credentials are needed to ${need === 'read' ? 'read from' : 'write to'} this cache` };
  }
  const user = config.users.get(creds.username);
  if (!user || !(await checker.check(header!, creds, user.password))) {
    return { kind: 'unauthorized', detail: 'Unknown user or wrong password' };
  }
  if (!satisfies(user.level, need)) {
    return { kind: 'forbidden', detail: `User '${user.name}' has level '${user.level}'; this needs '${need}'` };
  }
  return { kind: 'allow', user: user.name };
}

/**
 * Whether access is allowed without waiting for anything: anonymous access that suffices, or a
 * header that already passed whose user's level suffices (the hot path of authenticated hits).
 * False is no refusal: decideCacheAccess then decides.
 */
export function allowedAtOnce(config: NodeConfig, checker: PasswordChecker, header: string | undefined, need: Need): boolean {
  if (header === undefined || header === '') return satisfies(config.anonymousLevel, need);
  const name = checker.remembered(header);
  if (name === undefined) return false;
  const user = config.users.get(name);
  return user !== undefined && satisfies(user.level, need);
}
