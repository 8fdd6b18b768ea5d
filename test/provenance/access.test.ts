// Which attestations a reader may count and read (src/provenance/access.ts): bound to the
// repository of their subject, and for restricted readers made from a build they may see.

import { describe, expect, it } from 'vitest';
import { boundTo, buildOrigin, UNRESTRICTED, type Reader } from '../../src/provenance/access.js';
import { packageUrl } from '../../src/provenance/package.js';
import { BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1, VULNS_PREDICATE } from '../../src/provenance/predicates.js';
import { STATEMENT_V1, type Statement } from '../../src/provenance/statement.js';

const SHA = 'c'.repeat(64);
const RESTRICTED: Reader = { kind: 'restricted', visibility: { projects: ['billing'], withoutProject: false } };

function statement(subjectName: string | undefined, predicateType = BUILD_TOOL_PREDICATE, predicate: Record<string, unknown> = { buildId: 'b0000000000001' }): Statement {
  return { _type: STATEMENT_V1, subject: [{ ...(subjectName !== undefined ? { name: subjectName } : {}), digest: { sha256: SHA } }], predicateType, predicate };
}

describe('boundTo', () => {
  const ours = statement(packageUrl({ type: 'oci', name: 'app', version: '1.0' }, SHA, 'https://Registry.example.com/billing/app/'));

  it('counts an attestation for the repository of its subject, compared without scheme, host case or trailing slash', () => {
    for (const reader of [UNRESTRICTED, RESTRICTED]) {
      expect(boundTo(ours, SHA, 'registry.example.com/billing/app', reader)).toBe(true);
      expect(boundTo(ours, SHA, 'oci://REGISTRY.example.com/billing/app', reader)).toBe(true);
      expect(boundTo(ours, SHA, 'registry.example.com/payments/app', reader)).toBe(false);
      expect(boundTo(ours, SHA, 'registry.example.com/billing', reader)).toBe(false);
      expect(boundTo(ours, SHA, 'registry.example.com/billing/app/sub', reader)).toBe(false);
    }
  });

  it('only for the subject that carries the digest asked for', () => {
    expect(boundTo(ours, 'd'.repeat(64), 'registry.example.com/billing/app', UNRESTRICTED)).toBe(false);
  });

  it('an attestation whose subject names no repository counts for unrestricted readers only', () => {
    for (const name of ['pkg:oci/app', 'not a purl', undefined]) {
      const s = statement(name);
      expect(boundTo(s, SHA, 'registry.example.com/billing/app', UNRESTRICTED)).toBe(true);
      expect(boundTo(s, SHA, 'registry.example.com/billing/app', RESTRICTED)).toBe(false);
    }
  });
});

describe('buildOrigin', () => {
  it('reads the build of our build-tool predicate and of our SLSA provenance, whatever the build URI base', () => {
    expect(buildOrigin(statement(undefined))).toEqual({ kind: 'build', id: 'b0000000000001' });
    for (const uri of ['https://scans.example.com/s/b0000000000002', 'http://localhost:5080/builds/b0000000000002', 'https://x.example/a/b/b0000000000002/']) {
      const slsa = statement(undefined, SLSA_PROVENANCE_V1, { buildDefinition: { buildType: 'https://buildscope.dev/build-types/native/v1' }, runDetails: { metadata: { invocationId: uri } } });
      expect(buildOrigin(slsa)).toEqual({ kind: 'build', id: 'b0000000000002' });
    }
  });

  it('an attestation of ours whose build cannot be told is unknown; others are from no build of ours', () => {
    expect(buildOrigin(statement(undefined, BUILD_TOOL_PREDICATE, {}))).toEqual({ kind: 'unknown' });
    const ourSlsa = (runDetails: unknown) => statement(undefined, SLSA_PROVENANCE_V1, { buildDefinition: { buildType: 'https://buildscope.dev/build-types/native/v1' }, runDetails });
    expect(buildOrigin(ourSlsa({}))).toEqual({ kind: 'unknown' });
    expect(buildOrigin(ourSlsa({ metadata: { invocationId: 'not a url' } }))).toEqual({ kind: 'unknown' });
    expect(buildOrigin(statement(undefined, SLSA_PROVENANCE_V1, { buildDefinition: { buildType: 'https://github.com/actions/runner' } }))).toEqual({ kind: 'none' });
    expect(buildOrigin(statement(undefined, VULNS_PREDICATE, { scanner: {} }))).toEqual({ kind: 'none' });
  });
});
