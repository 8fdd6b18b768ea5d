// Policies from YAML and their evaluation, with properties where a law exists.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions, evaluatePolicy, globMatch, severityOf, type CountedAttestation } from '../../src/provenance/evaluate.js';
import { parsePolicies, PolicyError, selectPolicies } from '../../src/provenance/policies.js';
import { isRepositoryUrl, packageUrl, repositoryUnder } from '../../src/provenance/package.js';
import { VULNS_PREDICATE } from '../../src/provenance/predicates.js';
import { STATEMENT_V1 } from '../../src/provenance/statement.js';

const doc = (kind: string, name: string, spec: string, labels = '{ a: "1" }') => `apiVersion: policy.buildscope.dev/v1\nkind: ${kind}\nmetadata: { name: ${name}, labels: ${labels} }\nspec: ${spec}\n`;

describe('policy files', () => {
  it('reads every kind and selects policies by labels', () => {
    const set = parsePolicies(
      [
        doc('BuildToolPolicy', 'tools', '{ tools: [{ type: jvmbuild, versions: ["8.*"] }] }', '{ a: "1", b: "2" }'),
        doc('SigningKeyPolicy', 'keys', '{ keyIds: [ABC] }'),
        doc('PredicateTypePolicy', 'types', '{ predicateTypes: [x] }', '{ b: "2" }'),
        doc('VulnerabilityPolicy', 'vulns', '{ severity: critical }'),
        doc('SourceUriPolicy', 'uris', '{ uris: [https://git.example.com] }'),
        doc('PolicyScan', 'both', '{ selector: { matchLabels: { a: "1", b: "2" } } }', '{}'),
        doc('PolicyScan', 'all', '{ selector: {} }', '{}'),
      ].join('---\n'),
    );
    expect(set.policies.map((p) => p.kind)).toEqual(['BuildToolPolicy', 'SigningKeyPolicy', 'PredicateTypePolicy', 'VulnerabilityPolicy', 'SourceUriPolicy']);
    expect(selectPolicies(set, set.scans.get('both')!).map((p) => p.name)).toEqual(['tools']);
    expect(selectPolicies(set, set.scans.get('all')!)).toHaveLength(5);
    const keys = set.policies[1]!;
    expect(keys.kind === 'SigningKeyPolicy' && keys.keyIds).toEqual(['abc']);
  });

  it('rejects mistakes with a located message', () => {
    const bad: [string, RegExp][] = [
      [doc('Nope', 'x', '{}'), /unknown kind/],
      [doc('VulnerabilityPolicy', 'x', '{ severity: huge }'), /severity must be one of/],
      [doc('SigningKeyPolicy', 'x', '{ keyIds: [] }'), /keyIds must not be empty/],
      [doc('BuildToolPolicy', 'x', '{}'), /spec.tools/],
      [doc('SourceUriPolicy', 'Bad_Name', '{ uris: [a] }'), /metadata.name/],
      ['kind: PolicyScan\nmetadata: { name: x }\n', /apiVersion/],
      [doc('SourceUriPolicy', 'x', '{ uris: [a] }') + '---\n' + doc('SourceUriPolicy', 'x', '{ uris: [b] }'), /declared twice/],
      ['a: [', /document 1/],
    ];
    for (const [text, message] of bad) expect(() => parsePolicies(text)).toThrowError(message);
    expect(() => parsePolicies(doc('Nope', 'x', '{}'))).toThrowError(PolicyError);
  });
});

describe('evaluation helpers', () => {
  it('compareVersions is antisymmetric and numeric per segment', () => {
    const version = fc.array(fc.nat({ max: 30 }), { minLength: 1, maxLength: 4 }).map((a) => a.join('.'));
    fc.assert(fc.property(version, version, (a, b) => compareVersions(a, b) === -compareVersions(b, a)));
    expect(compareVersions('1.10', '1.9')).toBe(1);
    expect(compareVersions('2.0', '2')).toBe(0);
  });

  it('globMatch: `*` matches any text, everything else literally', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => globMatch(`${a.replace(/\*/g, '')}*`, a.replace(/\*/g, '') + b)));
    expect(globMatch('8.*', '8.10.2')).toBe(true);
    expect(globMatch('8.*', '18.1')).toBe(false);
    expect(globMatch('1.0', '1x0')).toBe(false);
  });

  it('severities: words and CVSS scores', () => {
    expect([severityOf('HIGH'), severityOf('moderate'), severityOf('9.8'), severityOf(7), severityOf('4.0'), severityOf('0.1'), severityOf('0'), severityOf('weird')]).toEqual([
      'high', 'medium', 'critical', 'high', 'medium', 'low', undefined, undefined,
    ]);
  });

  it('repository URLs: URLs and host/path forms; prefixes respect path segments', () => {
    for (const ok of ['https://repo.example.com/maven2', 'registry.example.com/team/app', 'localhost:5000/app', 'oci://ghcr.io/x']) expect(isRepositoryUrl(ok), ok).toBe(true);
    for (const bad of ['', 'not a url', 'justaword', 'http://', 'a b.com/x']) expect(isRepositoryUrl(bad), bad).toBe(false);
    expect(repositoryUnder('https://Registry.example.com/team-a/app', 'registry.example.com/team-a')).toBe(true);
    expect(repositoryUnder('registry.example.com/team-ab/app', 'registry.example.com/team-a')).toBe(false);
  });

  it('package URLs: oci carries the digest as version and the tag as qualifier; jvmpkg is maven', () => {
    expect(packageUrl({ type: 'oci', name: 'app', version: '1.0' }, 'a'.repeat(64), 'ghcr.io/acme/app')).toBe(`pkg:oci/app@sha256:${'a'.repeat(64)}?repository_url=ghcr.io%2Facme%2Fapp&tag=1.0`);
    expect(packageUrl({ type: 'jvmpkg', namespace: 'com.acme', name: 'lib', version: '2.0' }, 'a'.repeat(64), 'https://repo/m2')).toBe('pkg:maven/com.acme/lib@2.0?repository_url=https%3A%2F%2Frepo%2Fm2');
  });

  it('the vulnerability policy reads v0.2 results, nested or flat, and picks the worst score', () => {
    const set = parsePolicies(doc('VulnerabilityPolicy', 'v', '{ severity: high, remediation: fix it }'));
    const att = (result: unknown[]): CountedAttestation => ({
      id: 'x',
      instance: 'obj:a',
      uri: '/u',
      keyids: ['k'],
      statement: { _type: STATEMENT_V1, subject: [{ name: 'pkg:oci/app', digest: { sha256: 'a' } }], predicateType: VULNS_PREDICATE, predicate: { scanner: { uri: 'scanner', result } } },
    });
    const p = set.policies[0]!;
    const facts = { sha256: 'a', repositoryUrl: 'r.example.com/x' };
    expect(evaluatePolicy(p, [att([{ id: 'C1', severity: [{ method: 'nvd', score: 'medium' }] }])], facts).status).toBe('satisfied');
    const r = evaluatePolicy(p, [att([{ vulnerability: { id: 'C2', severity: [{ method: 'nvd', score: 'low' }, { method: 'cvss', score: '7.5' }] } }])], facts);
    expect(r).toMatchObject({ status: 'unsatisfied', policyRemediation: 'fix it', sourcedFromUri: 'scanner', details: { vulnerablePackage: 'pkg:oci/app', predicateType: VULNS_PREDICATE, vulnerability: 'C2', severity: 'high' } });
    expect(evaluatePolicy(p, [], facts)).toMatchObject({ status: 'not-applicable', attestationUri: null, details: { message: expect.stringContaining(VULNS_PREDICATE) } });
  });
});

describe('robustness against foreign predicates', () => {
  const set = parsePolicies(
    [
      doc('BuildToolPolicy', 'tools', '{ tools: [{ type: jvmbuild, versions: ["8.*"], minVersion: "8.1" }] }'),
      doc('SigningKeyPolicy', 'keys', '{ keyIds: [k] }'),
      doc('PredicateTypePolicy', 'types', '{ predicateTypes: [x] }'),
      doc('VulnerabilityPolicy', 'vulns', '{ severity: low }'),
      doc('SourceUriPolicy', 'uris', '{ uris: [https://git.example.com, "https://*.example.org/*"] }'),
    ].join('---\n'),
  );
  const predicateTypes = fc.constantFrom('https://buildscope.dev/attestation/build-tool/v1', 'https://slsa.dev/provenance/v1', VULNS_PREDICATE, 'x');
  // Shapes that look like the predicates we read, filled with anything.
  const predicate = fc.oneof(
    fc.dictionary(fc.string(), fc.jsonValue()),
    fc.record({ toolType: fc.jsonValue(), toolVersion: fc.jsonValue() }),
    fc.record({ scanner: fc.record({ uri: fc.jsonValue(), result: fc.array(fc.oneof(fc.jsonValue(), fc.record({ id: fc.jsonValue(), severity: fc.jsonValue(), annotations: fc.jsonValue() }))) }) }),
    fc.record({ buildDefinition: fc.record({ resolvedDependencies: fc.jsonValue(), externalParameters: fc.jsonValue() }) }),
  );

  it('judges a tool given as an object whose toString is not a function (found by the property below)', () => {
    const att: CountedAttestation = {
      id: '0',
      instance: 'obj:a',
      uri: '/u/0',
      keyids: ['k'],
      statement: { _type: STATEMENT_V1, subject: [{ digest: { sha256: 'a' } }], predicateType: 'https://buildscope.dev/attestation/build-tool/v1', predicate: { toolType: {}, toolVersion: { toString: false } } },
    };
    const r = evaluatePolicy(set.policies.find((p) => p.kind === 'BuildToolPolicy')!, [att], { sha256: 'a', repositoryUrl: 'r.example.com/x' });
    expect(r.status).toBe('unsatisfied');
    expect(r.details).toEqual({ buildTool: '{} {"toString":false}' });
  });

  it('every policy judges any predicate without throwing, and the result has every seed field', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(predicateTypes, predicate), { maxLength: 4 }), (items) => {
        const atts: CountedAttestation[] = items.map(([predicateType, p], i) => ({
          id: String(i),
          instance: 'obj:a',
          uri: `/u/${i}`,
          keyids: ['k'],
          statement: { _type: STATEMENT_V1, subject: [{ digest: { sha256: 'a' } }], predicateType, predicate: p as Record<string, unknown> },
        }));
        for (const policy of set.policies) {
          const r = evaluatePolicy(policy, atts, { sha256: 'a', repositoryUrl: 'r.example.com/x' });
          expect(['satisfied', 'unsatisfied', 'not-applicable']).toContain(r.status);
          expect(r.policyRemediation === '').toBe(r.status === 'satisfied' || policy.remediation === '');
          expect(typeof r.details).toBe('object');
        }
      }),
      { numRuns: 300 },
    );
  });
});
