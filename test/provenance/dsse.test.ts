// DSSE: the official test vectors (Ed25519 vectors and the ECDSA P-256 example of protocol.md),
// signing round trips and the failure reasons.

import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64 } from '../../src/provenance/base64.js';
import { pae, signEnvelope, verifyEnvelope } from '../../src/provenance/dsse.js';
import { generateSigningKey, keyIdOf, signingKey, verificationKey, type VerificationKey } from '../../src/provenance/keys.js';

interface Vector {
  id: string;
  envelope: { payload: string; payloadType: string; signatures: { sig: string; keyid?: string }[] };
  trustedKeys: string[];
  threshold: number;
  supportedPayloadTypes: string[];
  pae: string;
  expect: 'accept' | 'reject';
}
const fixtures = JSON.parse(readFileSync(new URL('./fixtures/dsse-vectors.json', import.meta.url), 'utf8')) as {
  keys: Record<string, { seed: string; public: string }>;
  vectors: Vector[];
  p256: { body: string; payloadType: string; pae: string; x: string; y: string; d: string; envelope: Vector['envelope'] };
};

const b64url = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
const ed25519Keys: Record<string, VerificationKey> = Object.fromEntries(
  Object.entries(fixtures.keys).map(([name, k]) => [
    name,
    signingKey(createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: b64url(k.seed), x: b64url(k.public) }, format: 'jwk' }), name),
  ]),
);
const decimalTo32 = (n: string) => BigInt(n).toString(16).padStart(64, '0');

describe('DSSE test vectors (secure-systems-lab/dsse)', () => {
  for (const v of fixtures.vectors) {
    it(`${v.id}: PAE matches and the verifier says ${v.expect}`, () => {
      const body = decodeBase64(v.envelope.payload)!;
      expect(body).toBeDefined();
      // The signatures cover the PAE of the type the signer used: for `payload-type-swapped` that is
      // not the envelope's type, so only compare when they agree.
      if (v.id !== 'payload-type-swapped') expect(pae(v.envelope.payloadType, body).toString('hex')).toBe(v.pae);
      const keys = v.trustedKeys.map((k) => ed25519Keys[k]!);
      const r = verifyEnvelope(v.envelope, keys, { threshold: v.threshold, payloadTypes: v.supportedPayloadTypes });
      expect(r.ok ? 'accept' : 'reject').toBe(v.expect);
    });
  }

  it('the Ed25519 keys are the RFC 8032 ones (public key derived from the seed)', () => {
    for (const [name, k] of Object.entries(fixtures.keys)) {
      const jwk = createPublicKey(createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: b64url(k.seed), x: b64url(k.public) }, format: 'jwk' })).export({ format: 'jwk' });
      expect(Buffer.from(jwk.x!, 'base64url').toString('hex'), name).toBe(k.public);
    }
  });

  it('explains rejections precisely', () => {
    const vector = (id: string) => fixtures.vectors.find((v) => v.id === id)!;
    const swapped = vector('payload-type-swapped');
    const emptyType = vector('empty-payload-type');
    const twice = vector('threshold-two-one-key-twice');
    const A = ed25519Keys['A']!;
    const B = ed25519Keys['B']!;
    const r1 = verifyEnvelope(swapped.envelope, [A], { payloadTypes: swapped.supportedPayloadTypes });
    expect(r1.ok || r1.reason).toBe('unknown-key'); // keyid "A" names no key we know by that id; nothing verifies
    const r2 = verifyEnvelope(emptyType.envelope, [A]);
    expect(r2.ok || r2.reason).toBe('wrong-payload-type');
    const r3 = verifyEnvelope(twice.envelope, [A, B], { threshold: 2 });
    expect(r3.ok || r3.reason).toBe('threshold-not-met');
  });

  it('the ECDSA P-256 example of protocol.md verifies (raw r||s signature)', () => {
    const p = fixtures.p256;
    expect(pae(p.payloadType, Buffer.from(p.body)).toString()).toBe(p.pae);
    const jwk = { kty: 'EC', crv: 'P-256', x: b64url(decimalTo32(p.x)), y: b64url(decimalTo32(p.y)), d: b64url(decimalTo32(p.d)) };
    const key = signingKey(createPrivateKey({ key: jwk, format: 'jwk' }), 'protocol.md');
    expect(key.algorithm).toBe('ecdsa-p256');
    const r = verifyEnvelope(p.envelope, [key], { payloadTypes: [p.payloadType] });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.body.toString()).toBe('hello world');
    // A changed body no longer verifies.
    const bad = verifyEnvelope({ ...p.envelope, payload: Buffer.from('hello World').toString('base64') }, [key], { payloadTypes: [p.payloadType] });
    expect(bad.ok || bad.reason).toBe('unknown-key');
    // Our own P-256 signatures are raw r||s (64 bytes) and verify.
    const env = signEnvelope(p.payloadType, Buffer.from(p.body), key);
    expect(Buffer.from(env.signatures[0]!.sig, 'base64')).toHaveLength(64);
    expect(verifyEnvelope(env, [verificationKey(key.publicKey, 'x')], { payloadTypes: [p.payloadType] }).ok).toBe(true);
  });
});

describe('signing and verifying', () => {
  const ed = generateSigningKey('ed25519');
  const ec = generateSigningKey('ecdsa-p256');
  const T = 'application/vnd.in-toto+json';

  it('keyid is the hex SHA-256 of the SPKI DER', () => {
    expect(ed.keyid).toMatch(/^[0-9a-f]{64}$/);
    expect(keyIdOf(ed.publicKey)).toBe(ed.keyid);
    expect(ed.keyid).not.toBe(ec.keyid);
  });

  it('round trip: any body signed by either algorithm verifies, in standard and URL-safe base64', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), fc.boolean(), (body, useEc, urlSafe) => {
        const key = useEc ? ec : ed;
        const env = signEnvelope(T, body, key);
        const conv = (s: string) => (urlSafe ? Buffer.from(s, 'base64').toString('base64url') : s);
        const shown = { ...env, payload: conv(env.payload), signatures: env.signatures.map((s) => ({ ...s, sig: conv(s.sig) })) };
        const r = verifyEnvelope(shown, [ed, ec]);
        return r.ok && Buffer.compare(r.body, Buffer.from(body)) === 0 && r.keyids[0] === key.keyid;
      }),
      { numRuns: 60 },
    );
  });

  it('any change of the payload is a bad signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.nat(), (body, at) => {
        const env = signEnvelope(T, body, ed);
        const changed = Buffer.from(body);
        changed[at % changed.length]! ^= 1;
        const r = verifyEnvelope({ ...env, payload: changed.toString('base64') }, [ed]);
        return !r.ok && r.reason === 'bad-signature';
      }),
      { numRuns: 60 },
    );
  });

  it('a signature by a key we do not know is an unknown key, whatever keyid it claims', () => {
    const env = signEnvelope(T, Buffer.from('{}'), generateSigningKey('ed25519'));
    const r = verifyEnvelope(env, [ed, ec]);
    expect(r.ok || r.reason).toBe('unknown-key');
    // Claiming our keyid does not help: the signature is checked, and fails.
    const r2 = verifyEnvelope({ ...env, signatures: [{ keyid: ed.keyid, sig: env.signatures[0]!.sig }] }, [ed]);
    expect(r2.ok || r2.reason).toBe('bad-signature');
  });

  it('malformed envelopes and base64 are rejected before any parsing', () => {
    for (const bad of [null, [], {}, { payload: 'x', payloadType: T }, { payload: 1, payloadType: T, signatures: [{ sig: 'aa' }] }, { payload: '!!!', payloadType: T, signatures: [{ sig: 'AAAA' }] }]) {
      const r = verifyEnvelope(bad, [ed]);
      expect(r.ok || r.reason).toBe('malformed-envelope');
    }
  });

  it('base64: standard and URL-safe decode alike; garbage is refused', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const b = Buffer.from(bytes);
        return (
          Buffer.compare(decodeBase64(b.toString('base64'))!, b) === 0 &&
          Buffer.compare(decodeBase64(b.toString('base64url'))!, b) === 0
        );
      }),
    );
    expect(decodeBase64('a$b=')).toBeUndefined();
    expect(decodeBase64('abcde')).toBeUndefined();
  });
});

describe('verifier robustness', () => {
  const key = generateSigningKey('ed25519');

  it('never throws on arbitrary JSON and never accepts it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = verifyEnvelope(v, [key]);
        return !r.ok;
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.record({ sig: fc.string(), keyid: fc.option(fc.string(), { nil: undefined }) }), { minLength: 1, maxLength: 3 }), (payload, payloadType, signatures) => {
        const r = verifyEnvelope({ payload, payloadType, signatures }, [key]);
        return !r.ok;
      }),
      { numRuns: 300 },
    );
  });

  it('PAE puts the byte lengths before type and body, so different splits never collide', () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ maxLength: 50 }), fc.string(), fc.uint8Array({ maxLength: 50 }), (t1, b1, t2, b2) => {
        fc.pre(t1 !== t2 || Buffer.compare(Buffer.from(b1), Buffer.from(b2)) !== 0);
        return !pae(t1, b1).equals(pae(t2, b2));
      }),
    );
  });
});
