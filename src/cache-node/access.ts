// Access control of the node: HTTP Basic against the hashed passwords of the configuration file.
// Deriving a scrypt key takes tens of milliseconds by design and runs on the thread pool that file
// reads need too, so:
//   - a successful check is remembered (by a SHA-256 of the header, never the password itself)
//     until the configuration changes, and so is a failed one for a while (a client repeating a
//     wrong header costs nothing);
//   - concurrent checks of one header share one derivation;
//   - derivations are bounded and failures limited per client (src/auth/hash-gate.ts);
//   - an unknown user name costs the same derivation as a known one (against a decoy hash with
//     the parameters of the configured users), so answers do not tell which names exist.

import { createHash, randomBytes } from 'node:crypto';
import type { AccessLevel, NodeConfig } from './config.js';
import type { FailureLimiter, HashGate } from '../auth/hash-gate.js';
import { DEFAULT_PARAMETERS, hashCost, verifySecret, type ParsedHashedSecret, type ScryptParameters } from './secret.js';

export const REALM = 'buildscope-cache-node';

export type Need = 'read' | 'readwrite';

export type AccessDecision =
  | { readonly kind: 'allow'; readonly user: string | null }
  /** 401: credentials missing (and anonymous access is not enough) or wrong. */
  | { readonly kind: 'unauthorized'; readonly detail: string }
  /** 403: valid credentials, or anonymous access, whose level is too low. */
  | { readonly kind: 'forbidden'; readonly detail: string }
  /** 429: too many failed checks from this client, or too many checks waiting; nothing was checked. */
  | { readonly kind: 'tooMany'; readonly detail: string; readonly retryAfterSeconds: number };

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

export type CheckOutcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'wait'; readonly detail: string; readonly retryAfterSeconds: number }
  /** The client went away while its check waited; nothing was derived and nobody reads an answer. */
  | { readonly kind: 'abandoned' };

const REMEMBERED = 1000;
/** How long a failed header is answered 401 without a new derivation. */
const REFUSED_FOR_MS = 60_000;

/** The parameters a decoy needs to cost what the most expensive of these hashes costs. */
export function costliest(hashes: Iterable<ParsedHashedSecret>): ScryptParameters {
  let best: ScryptParameters | null = null;
  for (const h of hashes) if (best === null || hashCost(h.parameters) > hashCost(best)) best = h.parameters;
  return best ?? DEFAULT_PARAMETERS;
}

/** Verifies passwords through the shared gate and limiter, with bounded memories of outcomes. */
export class PasswordChecker {
  private readonly passed = new Map<string, string>();
  private readonly refused = new Map<string, number>();
  private readonly running = new Map<string, Promise<CheckOutcome>>();
  private decoy: ParsedHashedSecret;

  constructor(
    private readonly gate: HashGate,
    private readonly limiter: FailureLimiter,
    private readonly clock: () => number = Date.now,
  ) {
    this.decoy = makeDecoy(DEFAULT_PARAMETERS);
  }

  /**
   * Forgets every remembered outcome (called when the configuration changes); unknown users are
   * checked against a decoy with `decoyParameters` from then on.
   */
  reset(decoyParameters: ScryptParameters = DEFAULT_PARAMETERS): void {
    this.passed.clear();
    this.refused.clear();
    this.decoy = makeDecoy(decoyParameters);
  }

  /** The user for whom exactly this header already passed, if any. */
  remembered(header: string): string | undefined {
    return this.passed.get(headerId(header));
  }

  /**
   * Checks `password` of `username` against `hashed`; `hashed` null (an unknown user) costs the
   * same derivation and fails. `client` is whom failures are counted against; `wanted` says
   * whether the client still waits for the answer.
   */
  async check(header: string, credentials: BasicCredentials, hashed: ParsedHashedSecret | null, client: string, wanted: () => boolean = () => true): Promise<CheckOutcome> {
    const id = headerId(header);
    if (hashed !== null && this.passed.get(id) === credentials.username) return { kind: 'ok' };
    const refusedAt = this.refused.get(id);
    if (refusedAt !== undefined && this.clock() - refusedAt < REFUSED_FOR_MS) return { kind: 'wrong' };
    const same = this.running.get(id);
    if (same) {
      const shared = await same;
      // The client whose check this was went away before it ran: this one runs its own.
      if (shared.kind !== 'abandoned') return shared;
      if (!wanted()) return shared;
      if (this.running.get(id) === same) this.running.delete(id);
      return this.check(header, credentials, hashed, client, wanted);
    }
    const admission = this.limiter.admit(client);
    if (admission.kind === 'wait') {
      return { kind: 'wait', retryAfterSeconds: admission.retryAfterSeconds, detail: `Too many failed password checks from ${client}; try again in ${admission.retryAfterSeconds} s` };
    }
    const outcome = (async (): Promise<CheckOutcome> => {
      const ran = await this.gate.run(() => verifySecret(credentials.password, hashed ?? this.decoy), wanted);
      switch (ran.kind) {
        case 'busy':
          admission.done(false);
          return { kind: 'wait', retryAfterSeconds: 1, detail: 'Too many password checks are waiting; try again in 1 s' };
        case 'abandoned':
          admission.done(false);
          return { kind: 'abandoned' };
        case 'ran':
          break;
      }
      const valid = ran.value && hashed !== null;
      admission.done(!valid);
      remember(valid ? this.passed : this.refused, id, valid ? credentials.username : this.clock());
      if (valid) this.refused.delete(id);
      return valid ? { kind: 'ok' } : { kind: 'wrong' };
    })();
    this.running.set(id, outcome);
    try {
      return await outcome;
    } finally {
      this.running.delete(id);
    }
  }
}

function headerId(header: string): string {
  return createHash('sha256').update(header).digest('base64');
}

function remember<V>(map: Map<string, V>, id: string, value: V): void {
  map.delete(id);
  if (map.size >= REMEMBERED) map.delete(map.keys().next().value as string);
  map.set(id, value);
}

/** A hash no password matches (a random key), costing what `parameters` cost. */
function makeDecoy(parameters: ScryptParameters): ParsedHashedSecret {
  return { kind: 'parameters', key: randomBytes(32), salt: randomBytes(16), parameters };
}

export async function decideCacheAccess(config: NodeConfig, checker: PasswordChecker, header: string | undefined, need: Need, client: string, wanted?: () => boolean): Promise<AccessDecision> {
  const creds = parseBasic(header);
  if (creds === 'malformed') return { kind: 'unauthorized', detail: 'The Authorization header is not valid HTTP Basic' };
  if (creds === null) {
    if (satisfies(config.anonymousLevel, need)) return { kind: 'allow', user: null };
    // Anonymous read but a write: credentials would help, so 401 (a client then sends them).
    return { kind: 'unauthorized', detail: `Credentials are needed to ${need === 'read' ? 'read from' : 'write to'} this cache` };
  }
  const user = config.users.get(creds.username);
  // An unknown user is checked too (against a decoy): the same work and the same answer.
  const outcome = await checker.check(header!, creds, user?.password ?? null, client, wanted);
  switch (outcome.kind) {
    case 'wait':
      return { kind: 'tooMany', detail: outcome.detail, retryAfterSeconds: outcome.retryAfterSeconds };
    case 'abandoned':
    case 'wrong':
      return { kind: 'unauthorized', detail: 'Unknown user or wrong password' };
    case 'ok':
      break;
  }
  if (!user) return { kind: 'unauthorized', detail: 'Unknown user or wrong password' };
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
