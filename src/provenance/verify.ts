// Verifying an attestation end to end: envelope signatures first, then the payload type, then the
// statement. Each failure says which step failed and why.

import { IN_TOTO_PAYLOAD_TYPE, verifyEnvelope, type VerifyFailureReason } from './dsse.js';
import type { VerificationKey } from './keys.js';
import { parseStatement, type Statement } from './statement.js';

export type AttestationVerification =
  | { readonly ok: true; readonly statement: Statement; readonly keyids: readonly string[] }
  | { readonly ok: false; readonly reason: VerifyFailureReason; readonly message: string };

export function verifyAttestation(envelope: unknown, keys: readonly VerificationKey[]): AttestationVerification {
  const checked = verifyEnvelope(envelope, keys, { payloadTypes: [IN_TOTO_PAYLOAD_TYPE] });
  if (!checked.ok) return checked;
  const parsed = parseStatement(checked.body);
  if (!parsed.ok) return parsed;
  return { ok: true, statement: parsed.statement, keyids: checked.keyids };
}

/** Human text of a failure reason, as the CLI prints it. */
export const FAILURE_LABELS: Readonly<Record<VerifyFailureReason, string>> = {
  'malformed-envelope': 'malformed envelope',
  'bad-signature': 'bad signature',
  'unknown-key': 'unknown key',
  'threshold-not-met': 'too few trusted signatures',
  'wrong-payload-type': 'wrong payload type',
  'malformed-statement': 'malformed statement',
};
