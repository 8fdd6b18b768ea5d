// The rules of POST /api/auth/token (seed 002): a new token never has more permissions, more
// projects or a later expiry than the credential that asks for it.

import type { Limits } from '../config.js';
import { isPermission, PERMISSION_NAMES, type Permission, type Principal } from './types.js';
import type { TokenClaims } from './tokens.js';

export interface TokenRequest {
  /** Already split at commas and merged across repeated parameters; undefined when absent. */
  readonly permissions?: readonly string[];
  readonly projectIds?: readonly string[];
  readonly expiresInHours?: number;
}

export type TokenDecision =
  | { readonly ok: true; readonly claims: TokenClaims }
  | { readonly ok: false; readonly status: 400 | 401 | 403; readonly detail: string };

const HOUR = 3600_000;

/** Splits comma-separated values of a repeated query parameter: `?a=x,y&a=z` -> x, y, z. */
export function splitList(v: string | readonly string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const parts = (typeof v === 'string' ? [v] : v).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  return [...new Set(parts)];
}

export function decideToken(principal: Principal, req: TokenRequest, limits: Limits, now: number): TokenDecision {
  if (principal.credential === 'password') {
    return { ok: false, status: 401, detail: 'Access tokens are created with an access key or an access token (Authorization: Bearer), not a password' };
  }

  // Permissions: default all of the credential's; asking for more is forbidden.
  let permissions: Permission[];
  if (req.permissions === undefined || req.permissions.length === 0) {
    permissions = PERMISSION_NAMES.filter((p) => principal.permissions.has(p));
  } else {
    // A name the server does not know is a permission the credential lacks: 403 like any other
    // (the public spec's rule), naming the known ones so that a typo is easy to see.
    const unknown = req.permissions.filter((p) => !isPermission(p));
    if (unknown.length > 0) {
      return {
        ok: false,
        status: 403,
        detail: `The credential lacks the permission${unknown.length > 1 ? 's' : ''} ${unknown.map((p) => `'${p}'`).join(', ')} (no such permission; known: ${PERMISSION_NAMES.join(', ')})`,
      };
    }
    const lacking = (req.permissions as Permission[]).filter((p) => !principal.permissions.has(p));
    if (lacking.length > 0) {
      return { ok: false, status: 403, detail: `The credential lacks the permission${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}` };
    }
    permissions = PERMISSION_NAMES.filter((p) => (req.permissions as readonly string[]).includes(p));
  }

  // Projects: only meaningful under project-level access control (a principal with a project list).
  let projects: string[] | null;
  if (principal.projects === null) {
    projects = null;
    // Without project-level access control every token may see data without a project.
    if (!permissions.includes('accessDataWithoutAssociatedProject')) {
      permissions = PERMISSION_NAMES.filter((p) => p === 'accessDataWithoutAssociatedProject' || permissions.includes(p));
    }
  } else if (req.projectIds === undefined || req.projectIds.length === 0) {
    projects = [...principal.projects];
  } else {
    const lacking = req.projectIds.filter((p) => !principal.projects!.includes(p));
    if (lacking.length > 0) {
      return { ok: false, status: 403, detail: `The credential has no access to the project${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}` };
    }
    projects = [...req.projectIds];
  }

  // Lifetime.
  const remaining = principal.expiresAt === null ? Infinity : principal.expiresAt - now;
  if (remaining <= 0) return { ok: false, status: 401, detail: 'The authenticating credential has expired' };
  let expiresAt: number;
  if (req.expiresInHours === undefined) {
    expiresAt = now + Math.min(limits.tokenDefaultHours * HOUR, remaining);
  } else {
    // A number above 0 (decimals such as 0.5 too, as the public spec allows; seed 002's integers
    // are a subset), at most tokenMaxHours.
    const h = req.expiresInHours;
    if (!Number.isFinite(h) || h <= 0 || h > limits.tokenMaxHours) {
      return { ok: false, status: 400, detail: `expiresInHours must be a number above 0 and at most ${limits.tokenMaxHours}, got ${h}` };
    }
    const lifetime = Math.round(h * HOUR);
    if (lifetime < 1000) return { ok: false, status: 400, detail: `expiresInHours ${h} is shorter than a second` };
    if (lifetime > remaining) {
      return {
        ok: false,
        status: 403,
        detail: `A token valid for ${h} hour${h === 1 ? '' : 's'} would outlive the authenticating credential, which expires at ${new Date(principal.expiresAt!).toISOString()}`,
      };
    }
    expiresAt = now + lifetime;
  }
  // A token made with a session (or with a token made with one) stands on the session's credential
  // and ends with it. One made with an access key does not: it is the public API's stateless token,
  // valid until it expires.
  const binding = principal.credential === 'token' ? principal.binding : undefined;
  return { ok: true, claims: { user: principal.user, permissions, projects, expiresAt, ...(binding !== undefined ? { binding } : {}) } };
}
