// The `auth` section: where the token signing key lives and the limits of failed password tries.
// One descriptor of src/config/sections.ts.

import { DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from '../auth/sign-in-limits.js';
import { faultAt, type Agrees, type Fault } from './schema-check.js';
import { ownSection } from './section.js';

/** Where the secret that signs access tokens lives. */
export type SigningKeys =
  /** In the shared database (default): every server process over that database uses the same key. */
  | { readonly kind: 'database' }
  /** In a file in this directory (created with a fresh key when missing). */
  | { readonly kind: 'directory'; readonly path: string };

export interface AuthSection {
  readonly signingKeys: SigningKeys;
  /** Failed password tries taken per user name and client (src/auth/sign-in-limits.ts). */
  readonly signInLimits: SignInLimits;
}

const signInLimitsSchema = {
  description: 'Failed password tries (sign-in and Basic credentials) taken per user name and client address before each further try waits, twice as long each time.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    userAndClient: { description: 'Failures of one user name from one address before its tries wait.', type: 'integer', minimum: 1, maximum: 1000, default: DEFAULT_SIGN_IN_LIMITS.userAndClient },
    client: { description: 'Failures from one address, all user names together, before its tries wait.', type: 'integer', minimum: 1, maximum: 100_000, default: DEFAULT_SIGN_IN_LIMITS.client },
    user: { description: 'Failures of one user name from all addresses before the addresses that failed on it lose their free tries (an address that has not failed on it keeps its try).', type: 'integer', minimum: 1, maximum: 1_000_000, default: DEFAULT_SIGN_IN_LIMITS.user },
    maxBackoffSeconds: { description: 'The longest wait between two tries, in seconds.', type: 'integer', minimum: 1, maximum: 86_400, default: DEFAULT_SIGN_IN_LIMITS.maxBackoffSeconds },
    forgetAfterSeconds: { description: 'Failures are forgotten this long after the last one, in seconds (at least maxBackoffSeconds).', type: 'integer', minimum: 1, maximum: 604_800, default: DEFAULT_SIGN_IN_LIMITS.forgetAfterSeconds },
  },
} as const;

export const authSchema = {
  description: 'Authentication.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    signingKeys: { description: '"database" (shared by every process over the database) or a directory holding the key.', type: 'string', minLength: 1, default: 'database' },
    signInLimits: signInLimitsSchema,
  },
} as const;

// Only `signInLimits` is compared: the resolved `signingKeys` is a union, not the file's string.
const agrees: Agrees<typeof signInLimitsSchema, SignInLimits> = true;
void agrees;

/** The section as the file gives it. */
export interface WrittenAuthSection {
  readonly signingKeys: string;
  readonly signInLimits: SignInLimits;
}

export const authSection = ownSection({
  name: 'auth',
  schema: authSchema,
  faults(a: WrittenAuthSection): Fault[] {
    // Failures forgotten before the longest wait ends would give a guesser her free tries back early.
    const signIn = a.signInLimits;
    if (signIn.forgetAfterSeconds >= signIn.maxBackoffSeconds) return [];
    return [faultAt(['signInLimits', 'forgetAfterSeconds'], `is ${signIn.forgetAfterSeconds}, below auth.signInLimits.maxBackoffSeconds (${signIn.maxBackoffSeconds})`)];
  },
  parse: (a: WrittenAuthSection): AuthSection => ({
    signingKeys: a.signingKeys === 'database' ? { kind: 'database' } : { kind: 'directory', path: a.signingKeys },
    signInLimits: a.signInLimits,
  }),
});
