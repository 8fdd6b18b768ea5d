// Base64 as DSSE wants it: signers may use the standard or the URL-safe alphabet, verifiers must
// accept both. Node's decoder silently skips characters it does not know, so we validate first:
// a typo in an envelope must be a decoding error, not a different payload.

const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes standard or URL-safe base64 (padding optional); undefined when the text is not base64. */
export function decodeBase64(text: string): Buffer | undefined {
  const s = text.replace(/\s+/g, '');
  if (!STANDARD.test(s) && !URL_SAFE.test(s)) return undefined;
  const body = s.replace(/=+$/, '');
  if (body.length % 4 === 1) return undefined;
  // Padding, when present, must be exactly what the length needs.
  if (s.length !== body.length && s.length % 4 !== 0) return undefined;
  return Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

export function encodeBase64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}
