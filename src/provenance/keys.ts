// Signing and verification keys. Ed25519 by default, ECDSA P-256 as an option. A keyid is the
// lowercase hex SHA-256 of the public key's SPKI DER, so anyone holding the public key can compute
// it. Keys live as PEM files in a key directory (generated on first start) or are named in config;
// several keys allow rotation: the active one signs, all of them verify.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const KEY_ALGORITHMS = ['ed25519', 'ecdsa-p256'] as const;
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

export interface VerificationKey {
  readonly keyid: string;
  readonly algorithm: KeyAlgorithm;
  readonly publicKey: KeyObject;
  readonly publicKeyPem: string;
  /** Where the key came from, for messages: a file path or `config`. */
  readonly origin: string;
}

export interface SigningKey extends VerificationKey {
  readonly privateKey: KeyObject;
}

export interface KeyRing {
  /** The key that signs new attestations. */
  readonly active: SigningKey;
  /** Every key whose signatures are accepted: own keys (active and retired) and trusted foreign keys. */
  readonly verification: readonly VerificationKey[];
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

export function algorithmOf(key: KeyObject): KeyAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ecdsa-p256';
  throw new Error(`Unsupported key type ${key.asymmetricKeyType ?? 'unknown'}: use Ed25519 or ECDSA P-256`);
}

export function verificationKey(publicKey: KeyObject, origin: string): VerificationKey {
  return {
    keyid: keyIdOf(publicKey),
    algorithm: algorithmOf(publicKey),
    publicKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    origin,
  };
}

export function signingKey(privateKey: KeyObject, origin: string): SigningKey {
  return { ...verificationKey(createPublicKey(privateKey), origin), privateKey };
}

/** Reads a public key from PEM: a public key, a certificate's key, or the public half of a private key. */
export function publicKeyFromPem(pem: string | Buffer, origin: string): VerificationKey {
  return verificationKey(createPublicKey(pem), origin);
}

export function generateSigningKey(algorithm: KeyAlgorithm): SigningKey {
  const { privateKey } =
    algorithm === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return signingKey(privateKey, 'generated');
}

export function signBytes(key: SigningKey, data: Uint8Array): Buffer {
  switch (key.algorithm) {
    case 'ed25519':
      return sign(null, data, key.privateKey);
    case 'ecdsa-p256':
      // Raw r||s (IEEE P1363), as DSSE's P-256 example and most DSSE signers use.
      return sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  }
}

export function verifyBytes(key: VerificationKey, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    switch (key.algorithm) {
      case 'ed25519':
        return verify(null, data, key.publicKey, signature);
      case 'ecdsa-p256':
        // Raw r||s is 64 bytes; other signers (cosign, for one) write ASN.1 DER: accept both.
        return verify('sha256', data, { key: key.publicKey, dsaEncoding: signature.length === 64 ? 'ieee-p1363' : 'der' }, signature);
    }
  } catch {
    return false;
  }
}

export interface KeyConfig {
  readonly algorithm: KeyAlgorithm;
  /** Directory of own keys (`<keyid>.key.pem`), generated on first start. */
  readonly directory: string;
  /** Private key PEM files named in config; when given, the directory is not used. */
  readonly files: readonly string[];
  /** keyid (or a unique prefix) of the key that signs; default: the one in `<directory>/active`, else the first. */
  readonly active?: string;
  /** Public key PEM files of other signers (scanners, CI) whose envelopes are accepted. */
  readonly trusted: readonly string[];
}

/** Loads (or on first start creates) the key ring. */
export function loadKeyRing(config: KeyConfig): KeyRing {
  const own: SigningKey[] = [];
  let activeId = config.active;
  if (config.files.length > 0) {
    for (const f of config.files) own.push(signingKey(createPrivateKey(readFileSync(f)), f));
  } else {
    mkdirSync(config.directory, { recursive: true });
    for (const f of readdirSync(config.directory).filter((n) => n.endsWith('.key.pem')).sort()) {
      const path = join(config.directory, f);
      own.push(signingKey(createPrivateKey(readFileSync(path)), path));
    }
    if (own.length === 0) own.push(writeNewKey(config.directory, config.algorithm));
    const activeFile = join(config.directory, 'active');
    if (activeId === undefined && existsSync(activeFile)) activeId = readFileSync(activeFile, 'utf8').trim();
  }
  const active = activeId === undefined ? own[0] : own.find((k) => k.keyid.startsWith(activeId.toLowerCase()));
  if (!active) throw new Error(`provenance.keys.active: no key with id ${activeId}`);
  const trusted = config.trusted.map((f) => publicKeyFromPem(readFileSync(f), f));
  const seen = new Set<string>();
  const verification = [active, ...own, ...trusted].filter((k) => (seen.has(k.keyid) ? false : (seen.add(k.keyid), true)));
  return { active, verification };
}

/**
 * The keys that verify, read without creating anything (offline verification is read-only):
 * the configured key files or the keys in the key directory, and the trusted public keys.
 * Throws when there is none.
 */
export function loadVerificationKeys(config: KeyConfig): VerificationKey[] {
  const keys: VerificationKey[] = [];
  if (config.files.length > 0) {
    for (const f of config.files) keys.push(signingKey(createPrivateKey(readFileSync(f)), f));
  } else if (existsSync(config.directory)) {
    for (const f of readdirSync(config.directory).filter((n) => n.endsWith('.key.pem')).sort()) {
      const path = join(config.directory, f);
      keys.push(signingKey(createPrivateKey(readFileSync(path)), path));
    }
  }
  for (const f of config.trusted) keys.push(publicKeyFromPem(readFileSync(f), f));
  if (keys.length === 0) throw new Error(`no provenance keys in ${config.directory} (and none trusted): give --key PEM, or --data DIR of a server that signs`);
  return keys;
}

/** Creates a key in the directory and makes it the active one (key rotation); old keys keep verifying. */
export function rotateKey(directory: string, algorithm: KeyAlgorithm): SigningKey {
  mkdirSync(directory, { recursive: true });
  const key = writeNewKey(directory, algorithm);
  writeFileSync(join(directory, 'active'), `${key.keyid}\n`);
  return key;
}

function writeNewKey(directory: string, algorithm: KeyAlgorithm): SigningKey {
  const generated = generateSigningKey(algorithm);
  const path = join(directory, `${generated.keyid}.key.pem`);
  writeFileSync(path, generated.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  chmodSync(path, 0o600);
  return { ...generated, origin: path };
}
