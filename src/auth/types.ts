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

export interface Principal {
  readonly user: string;
  readonly credential: CredentialKind;
  readonly permissions: ReadonlySet<Permission>;
  /** Projects the principal may see, or null when there is no project-level restriction. */
  readonly projects: readonly string[] | null;
  /** Epoch ms when the credential expires (null: never, e.g. a password). */
  readonly expiresAt: number | null;
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
  /** Credentials were sent but are wrong, unknown, expired or malformed. */
  | { readonly kind: 'rejected'; readonly reason: string };
