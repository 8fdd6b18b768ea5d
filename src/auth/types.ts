// Who is asking, and what they may do. Produced by the authenticator (src/auth/) from an
// Authorization header; read by every HTTP face to decide 401/403 and the store visibility.

import type { Visibility } from '../store/types.js';

/** Permission config values, with the labels the server shows for them. */
export const PERMISSIONS = {
  accessBuildDataViaApi: 'Access build data via the API',
  exportData: 'Export API',
  publishScan: 'Publish build scans',
  readCache: 'Read from the build cache',
  writeCache: 'Write to the build cache',
  accessDataWithoutAssociatedProject: 'Access all data without an associated project',
  publishAttestations: 'Publish attestations',
  evaluatePolicies: 'Evaluate policy scans',
  readAttestations: 'Read attestations',
  manageCacheNodes: 'Manage build cache nodes',
  readMetrics: 'Read server metrics',
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

export function isPermission(s: string): s is Permission {
  return Object.prototype.hasOwnProperty.call(PERMISSIONS, s);
}

export type CredentialKind = 'password' | 'accessKey' | 'token';

/**
 * The credential a browser session was opened with. The session's token, and every token made
 * with the session, carries it and is checked against the database (through the authentication
 * cache, so within its 5 s): revoking the key, changing the password or removing the user ends them.
 */
export type CredentialBinding =
  /** An access key, by the SHA-256 the database stores it as (the key itself is never in a token). */
  | { readonly kind: 'accessKey'; readonly keyHash: string }
  /** A password, by a fingerprint of the user's stored hash: a new password is a new fingerprint. */
  | { readonly kind: 'password'; readonly fingerprint: string };

export interface Principal {
  readonly user: string;
  readonly credential: CredentialKind;
  readonly permissions: ReadonlySet<Permission>;
  /** Projects the principal may see, or null when there is no project-level restriction. */
  readonly projects: readonly string[] | null;
  /** Epoch ms when the credential expires (null: never, e.g. a password). */
  readonly expiresAt: number | null;
  /**
   * What a session opened with this principal stands on: the key or password itself, or, for a
   * token, the binding it carries (a session's token, or a token made with a session). Absent for
   * tokens that stand on nothing but their signature and expiry.
   */
  readonly binding?: CredentialBinding;
}

/** The store filter that follows from a principal's projects and permissions. */
export function visibilityOf(p: Principal): Visibility {
  return {
    projects: p.projects ?? 'all',
    withoutProject: p.projects === null || p.permissions.has('accessDataWithoutAssociatedProject'),
  };
}

export type AuthResult =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'authenticated'; readonly principal: Principal }
  /**
   * Credentials were sent but are wrong, unknown, expired or malformed; or, with
   * `retryAfterSeconds`, not checked at all because of too many failed sign-ins (answered 429 with
   * Retry-After by the HTTP faces).
   */
  | { readonly kind: 'rejected'; readonly reason: string; readonly retryAfterSeconds?: number };
