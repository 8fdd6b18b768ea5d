// Hashed secret strings: the form in which passwords (cache users, secure UI) appear in the node's
// configuration file.
//
// Shape (from the seed): 43 base64 characters and `=` (a 32-byte value), a colon, then base64 in
// groups of four. The seed says nothing of the derivation; the one chosen here is scrypt, salted
// and deliberately slow:
//   first part  = base64(scrypt(NFC(secret), salt, 32 bytes, N = 2^logN, r, p))
// and the second part is one of two kinds:
//   'parameters': base64(version 1 | logN | r | p | 16-byte salt) (20 bytes), what
//                 `cache-node hash-secret` writes; the parameters travel with the hash, so they
//                 can be raised later without breaking old files.
//   'salt':       any other second part of the seed's shape (a file written by another tool):
//                 its bytes are the salt, with the default parameters (N = 2^15, r = 8, p = 1).
// A second part is read as 'parameters' only when it is exactly 20 bytes, starts with the
// version byte and holds usable parameters; everything else the seed's shape allows is a salt,
// so no file of that shape is refused.

import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const FORMAT_VERSION = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export interface ScryptParameters {
  readonly logN: number;
  readonly r: number;
  readonly p: number;
}

/** 2^15 × 8 × 128 B = 32 MiB and ~50-100 ms per derivation on a current core. */
export const DEFAULT_PARAMETERS: ScryptParameters = { logN: 15, r: 8, p: 1 };

export interface ParsedHashedSecret {
  /** How the second part was read: parameters and salt (hash-secret), or a bare salt. */
  readonly kind: 'parameters' | 'salt';
  readonly key: Buffer;
  readonly salt: Buffer;
  readonly parameters: ScryptParameters;
}

export type HashParseResult =
  | { readonly ok: true; readonly value: ParsedHashedSecret }
  | { readonly ok: false; readonly reason: string };

function scrypt(secret: string, salt: Buffer, p: ScryptParameters): Promise<Buffer> {
  const N = 2 ** p.logN;
  const options: ScryptOptions = { N, r: p.r, p: p.p, maxmem: 256 * N * p.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(secret.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashSecret(secret: string, parameters: ScryptParameters = DEFAULT_PARAMETERS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scrypt(secret, salt, parameters);
  const meta = Buffer.concat([Buffer.from([FORMAT_VERSION, parameters.logN, parameters.r, parameters.p]), salt]);
  return `${key.toString('base64')}:${meta.toString('base64')}`;
}

/** Reads a hashed secret string that already matches the schema's pattern. */
export function parseHashedSecret(text: string): HashParseResult {
  const compact = text.replace(/\s+/g, '');
  const colon = compact.indexOf(':');
  if (colon !== 44) return { ok: false, reason: 'expected 43 base64 characters and "=" before the colon' };
  const key = Buffer.from(compact.slice(0, colon), 'base64');
  const meta = Buffer.from(compact.slice(colon + 1), 'base64');
  if (key.length !== KEY_LENGTH) return { ok: false, reason: 'the first part must encode 32 bytes' };
  const own = ownParameters(meta);
  if (own) return { ok: true, value: { kind: 'parameters', key, salt: meta.subarray(4), parameters: own } };
  return { ok: true, value: { kind: 'salt', key, salt: meta, parameters: DEFAULT_PARAMETERS } };
}

/** The parameters of a second part written by hashSecret, or null when it is not one. */
function ownParameters(meta: Buffer): ScryptParameters | null {
  if (meta.length !== 4 + SALT_LENGTH || meta[0] !== FORMAT_VERSION) return null;
  const parameters = { logN: meta[1]!, r: meta[2]!, p: meta[3]! };
  // Within what scrypt accepts here (maxmem, 128 * r * p < 2^30); hashSecret writes 15, 8, 1.
  if (parameters.logN < 1 || parameters.logN > 22 || parameters.r < 1 || parameters.r > 32 || parameters.p < 1 || parameters.p > 16) return null;
  return parameters;
}

/** The scrypt work of one check with these parameters (N × r × p), to compare costs. */
export function hashCost(p: ScryptParameters): number {
  return 2 ** p.logN * p.r * p.p;
}

export async function verifySecret(secret: string, hashed: ParsedHashedSecret): Promise<boolean> {
  const key = await scrypt(secret, hashed.salt, hashed.parameters);
  return timingSafeEqual(key, hashed.key);
}
