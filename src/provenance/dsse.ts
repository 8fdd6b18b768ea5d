// DSSE (Dead Simple Signing Envelope) v1: the signature covers PAE(payloadType, payload), never the
// JSON of the envelope, and the payload is only parsed after a signature verified.

import { decodeBase64, encodeBase64 } from './base64.js';
import { signBytes, verifyBytes, type SigningKey, type VerificationKey } from './keys.js';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface EnvelopeSignature {
  readonly keyid?: string;
  readonly sig: string;
}

export interface Envelope {
  readonly payload: string;
  readonly payloadType: string;
  readonly signatures: readonly EnvelopeSignature[];
}

/** Pre-Authentication Encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes. */
export function pae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'ascii'),
    type,
    Buffer.from(` ${body.length} `, 'ascii'),
    body,
  ]);
}

export function signEnvelope(payloadType: string, body: Uint8Array, key: SigningKey): Envelope {
  const sig = signBytes(key, pae(payloadType, body));
  return { payload: encodeBase64(body), payloadType, signatures: [{ keyid: key.keyid, sig: encodeBase64(sig) }] };
}

export type VerifyFailureReason =
  | 'malformed-envelope'
  | 'bad-signature'
  | 'unknown-key'
  | 'threshold-not-met'
  | 'wrong-payload-type'
  | 'malformed-statement';

export type EnvelopeVerification =
  | {
      readonly ok: true;
      readonly payloadType: string;
      readonly body: Buffer;
      /** keyids of the distinct trusted keys whose signatures verified. */
      readonly keyids: readonly string[];
    }
  | { readonly ok: false; readonly reason: VerifyFailureReason; readonly message: string };

export type EnvelopeParse =
  | { readonly ok: true; readonly envelope: Envelope }
  | { readonly ok: false; readonly reason: 'malformed-envelope'; readonly message: string };

/** Checks the JSON shape of an envelope (not its signatures). */
export function parseEnvelope(value: unknown): EnvelopeParse {
  const bad = (message: string): EnvelopeParse => ({ ok: false, reason: 'malformed-envelope', message });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('the envelope is not a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v.payload !== 'string') return bad('the envelope has no string `payload`');
  if (typeof v.payloadType !== 'string') return bad('the envelope has no string `payloadType`');
  if (!Array.isArray(v.signatures) || v.signatures.length === 0) return bad('the envelope has no `signatures`');
  const signatures: EnvelopeSignature[] = [];
  for (const [i, s] of v.signatures.entries()) {
    if (typeof s !== 'object' || s === null) return bad(`signature #${i + 1} is not an object`);
    const { sig, keyid } = s as Record<string, unknown>;
    if (typeof sig !== 'string') return bad(`signature #${i + 1} has no string \`sig\``);
    if (keyid !== undefined && keyid !== null && typeof keyid !== 'string') return bad(`signature #${i + 1} has a non-string \`keyid\``);
    signatures.push(typeof keyid === 'string' && keyid !== '' ? { keyid, sig } : { sig });
  }
  return { ok: true, envelope: { payload: v.payload, payloadType: v.payloadType, signatures } };
}

export interface VerifyOptions {
  /** Number of distinct trusted keys that must have signed (default 1). */
  readonly threshold?: number;
  /** Accepted payload types (default: only the in-toto type). */
  readonly payloadTypes?: readonly string[];
}

/**
 * Verifies an envelope against trusted keys, per the DSSE protocol: decode, verify every signature
 * against PAE, count distinct accepted keys, then check the payload type. The keyid only orders the
 * keys tried; it never decides trust.
 */
export function verifyEnvelope(value: unknown, keys: readonly VerificationKey[], options: VerifyOptions = {}): EnvelopeVerification {
  const parsed = parseEnvelope(value);
  if (!parsed.ok) return parsed;
  const { envelope } = parsed;
  const body = decodeBase64(envelope.payload);
  if (body === undefined) return { ok: false, reason: 'malformed-envelope', message: 'the payload is not base64' };
  const message = pae(envelope.payloadType, body);
  const accepted = new Set<string>();
  const failures: string[] = [];
  let namedKnownKey = false;
  for (const [i, s] of envelope.signatures.entries()) {
    const sig = decodeBase64(s.sig);
    if (sig === undefined) return { ok: false, reason: 'malformed-envelope', message: `signature #${i + 1} is not base64` };
    const named = s.keyid === undefined ? undefined : keys.find((k) => k.keyid === s.keyid);
    if (named) namedKnownKey = true;
    const candidates = named ? [named, ...keys.filter((k) => k !== named)] : keys;
    const by = candidates.find((k) => verifyBytes(k, message, sig));
    if (by) accepted.add(by.keyid);
    else if (named) failures.push(`the signature #${i + 1} by key ${s.keyid} does not match the payload`);
    else failures.push(`signature #${i + 1} is by an unknown key${s.keyid === undefined ? ' (no keyid given)' : ` (keyid ${s.keyid})`}`);
  }
  const threshold = options.threshold ?? 1;
  if (accepted.size < threshold) {
    if (accepted.size > 0) {
      return { ok: false, reason: 'threshold-not-met', message: `${accepted.size} distinct trusted key(s) signed, ${threshold} required; ${failures.join('; ')}` };
    }
    return { ok: false, reason: namedKnownKey ? 'bad-signature' : 'unknown-key', message: failures.join('; ') };
  }
  const payloadTypes = options.payloadTypes ?? [IN_TOTO_PAYLOAD_TYPE];
  if (!payloadTypes.includes(envelope.payloadType)) {
    return {
      ok: false,
      reason: 'wrong-payload-type',
      message: `payload type ${JSON.stringify(envelope.payloadType)} is not supported (expected ${payloadTypes.join(' or ')})`,
    };
  }
  return { ok: true, payloadType: envelope.payloadType, body, keyids: [...accepted] };
}
