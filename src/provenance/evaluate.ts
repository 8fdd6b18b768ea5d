// Judging one policy against the attestations of a package. Pure: the attestations given here are
// already the ones that count (signature verified, subject digest = the package's sha256).

import { BUILD_TOOL_PREDICATE, SLSA_PROVENANCE_V1 } from './predicates.js';
import { policyUri, SEVERITIES, type Policy, type Severity, type ToolRule } from './policies.js';
import { repositoryUnder } from './package.js';
import type { Statement } from './statement.js';
import { matchSegments } from '../query/evaluate.js';

export interface CountedAttestation {
  readonly id: string;
  readonly instance: string;
  /** The fetch path of the attestation. */
  readonly uri: string;
  readonly statement: Statement;
  /** keyids of the trusted keys whose signatures verified. */
  readonly keyids: readonly string[];
}

export type ResultStatus = 'satisfied' | 'unsatisfied' | 'not-applicable';

export interface PolicyResult {
  readonly labels: Readonly<Record<string, string>>;
  readonly status: ResultStatus;
  readonly policyUri: string;
  readonly policyDescription: string;
  readonly policyRemediation: string;
  readonly attestationUri: string | null;
  readonly sourcedFromUri: string | null;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface PackageFacts {
  readonly sha256: string;
  readonly repositoryUrl: string;
}

/** Where the data in an attestation came from: the build, the provenance invocation, the scanner. */
export function sourcedFrom(s: Statement): string | null {
  const p = s.predicate as Record<string, unknown>;
  const get = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((x, k) => (typeof x === 'object' && x !== null ? (x as Record<string, unknown>)[k] : undefined), o);
  const candidates = [
    p['buildUri'],
    get(p, 'runDetails', 'metadata', 'invocationId'),
    get(p, 'scanner', 'uri'),
    get(p, 'invocation', 'uri'),
    get(p, 'runDetails', 'builder', 'id'),
  ];
  const found = candidates.find((c) => typeof c === 'string' && c !== '');
  return (found as string | undefined) ?? null;
}

function result(policy: Policy, status: ResultStatus, att: CountedAttestation | undefined, details: Record<string, unknown>): PolicyResult {
  return {
    labels: policy.labels,
    status,
    policyUri: policyUri(policy),
    policyDescription: policy.description,
    policyRemediation: status === 'satisfied' ? '' : policy.remediation,
    attestationUri: att?.uri ?? null,
    sourcedFromUri: att ? sourcedFrom(att.statement) : null,
    details,
  };
}

function notApplicable(policy: Policy, predicateType: string): PolicyResult {
  return result(policy, 'not-applicable', undefined, {
    message: `No verified attestation with predicate type ${predicateType} for this package.`,
    predicateType,
  });
}

/**
 * The tool a build-tool predicate names, as text. A foreign predicate may hold anything there: a
 * value that is not a string is shown as its JSON (String() throws on an object whose toString
 * is not a function): a number as itself, an object as what no rule names.
 */
function toolOf(statement: Statement): { type: string; version: string } {
  const text = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));
  return { type: text(statement.predicate['toolType']), version: text(statement.predicate['toolVersion']) };
}

export function evaluatePolicy(policy: Policy, attestations: readonly CountedAttestation[], facts: PackageFacts): PolicyResult {
  switch (policy.kind) {
    case 'BuildToolPolicy': {
      const relevant = attestations.filter((a) => a.statement.predicateType === BUILD_TOOL_PREDICATE);
      if (relevant.length === 0) return notApplicable(policy, BUILD_TOOL_PREDICATE);
      for (const a of relevant) {
        const { type, version } = toolOf(a.statement);
        if (!policy.tools.some((r) => toolAllowed(r, type, version))) {
          return result(policy, 'unsatisfied', a, { buildTool: `${type} ${version}` });
        }
      }
      const first = toolOf(relevant[0]!.statement);
      return result(policy, 'satisfied', relevant[0], { buildTool: `${first.type} ${first.version}` });
    }
    case 'SigningKeyPolicy': {
      if (attestations.length === 0) {
        return result(policy, 'not-applicable', undefined, { message: 'No verified attestation for this package.' });
      }
      for (const a of attestations) {
        if (!a.keyids.some((k) => policy.keyIds.includes(k))) return result(policy, 'unsatisfied', a, { keyIds: [...a.keyids] });
      }
      const used = [...new Set(attestations.flatMap((a) => a.keyids))].sort();
      return result(policy, 'satisfied', attestations[0], { keyIds: used });
    }
    case 'PredicateTypePolicy': {
      const present = new Set(attestations.map((a) => a.statement.predicateType));
      const missing = policy.predicateTypes.filter((t) => !present.has(t));
      if (missing.length > 0) {
        return result(policy, 'unsatisfied', undefined, {
          message: `Missing attestations with predicate type ${missing.join(', ')}.`,
          predicateTypes: missing,
        });
      }
      const first = attestations.find((a) => a.statement.predicateType === policy.predicateTypes[0]);
      return result(policy, 'satisfied', first, { predicateTypes: [...policy.predicateTypes] });
    }
    case 'VulnerabilityPolicy': {
      const relevant = attestations.filter((a) => a.statement.predicateType === policy.predicateType);
      if (relevant.length === 0) return notApplicable(policy, policy.predicateType);
      const threshold = SEVERITIES.indexOf(policy.severity);
      for (const a of relevant) {
        for (const v of vulnerabilities(a.statement)) {
          if (v.severity !== undefined && SEVERITIES.indexOf(v.severity) >= threshold) {
            return result(policy, 'unsatisfied', a, {
              vulnerablePackage: v.pkg,
              predicateType: policy.predicateType,
              vulnerability: v.id,
              severity: v.severity,
            });
          }
        }
      }
      return result(policy, 'satisfied', relevant[0], { predicateType: policy.predicateType });
    }
    case 'SourceUriPolicy': {
      const relevant = attestations.filter((a) => a.statement.predicateType === SLSA_PROVENANCE_V1);
      if (relevant.length === 0) return notApplicable(policy, SLSA_PROVENANCE_V1);
      const checked: string[] = [];
      for (const a of relevant) {
        const uris = sourceUris(a.statement);
        const bad = uris.filter((u) => !policy.uris.some((allowed) => uriAllowed(u, allowed)));
        if (bad.length > 0) return result(policy, 'unsatisfied', a, { uris: bad });
        checked.push(...uris);
      }
      return result(policy, 'satisfied', relevant[0], { uris: [...new Set(checked)] });
    }
    default: {
      const never: never = policy;
      throw new Error(`unknown policy ${JSON.stringify(never)}`);
    }
  }
}

/** `*` in a pattern matches any text; everything else literally (and case-sensitively). */
export function globMatch(pattern: string, text: string): boolean {
  return matchSegments(pattern.split('*'), text);
}

/** Compares dotted versions by numeric segments (1.10 > 1.9); non-numeric parts compare as text. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/);
  const pb = b.split(/[.-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    const c = !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : x.localeCompare(y);
    if (c !== 0) return Math.sign(c);
  }
  return 0;
}

function toolAllowed(rule: ToolRule, type: string, version: string): boolean {
  if (rule.type !== type) return false;
  if (rule.minVersion !== undefined && compareVersions(version, rule.minVersion) < 0) return false;
  return rule.versions.length === 0 || rule.versions.some((p) => globMatch(p, version));
}

function uriAllowed(uri: string, allowed: string): boolean {
  if (allowed.includes('*')) return globMatch(allowed, uri);
  return repositoryUnder(uri, allowed);
}

/** Source URIs of a SLSA provenance: resolved dependencies and the package repository parameter. */
export function sourceUris(s: Statement): string[] {
  const def = s.predicate['buildDefinition'] as Record<string, unknown> | undefined;
  const out: string[] = [];
  const deps = def?.['resolvedDependencies'];
  if (Array.isArray(deps)) for (const d of deps) if (typeof d?.uri === 'string') out.push(d.uri);
  const ext = def?.['externalParameters'] as Record<string, unknown> | undefined;
  if (typeof ext?.['repository'] === 'string') out.push(ext['repository']);
  return out;
}

export interface Vulnerability {
  readonly id: string;
  readonly pkg: string;
  readonly severity: Severity | undefined;
}

/** Severity level of a score: a word (low…critical) or a CVSS number. */
export function severityOf(score: unknown): Severity | undefined {
  if (typeof score === 'number' || (typeof score === 'string' && /^\d+(\.\d+)?$/.test(score.trim()))) {
    const n = Number(score);
    if (n >= 9) return 'critical';
    if (n >= 7) return 'high';
    if (n >= 4) return 'medium';
    return n > 0 ? 'low' : undefined;
  }
  if (typeof score !== 'string') return undefined;
  const w = score.trim().toLowerCase();
  if (w === 'moderate') return 'medium';
  return (SEVERITIES as readonly string[]).includes(w) ? (w as Severity) : undefined;
}

/** The findings of a vulnerability predicate (in-toto vulns v0.1/v0.2 layout). */
export function vulnerabilities(s: Statement): Vulnerability[] {
  const scanner = s.predicate['scanner'] as Record<string, unknown> | undefined;
  const results = scanner?.['result'];
  if (!Array.isArray(results)) return [];
  const subjectName = s.subject[0]?.name ?? 'the package';
  const out: Vulnerability[] = [];
  for (const r of results) {
    if (typeof r !== 'object' || r === null) continue;
    const entry = ((r as Record<string, unknown>)['vulnerability'] ?? r) as Record<string, unknown>;
    const id = typeof entry['id'] === 'string' ? entry['id'] : 'unknown';
    const sev = Array.isArray(entry['severity']) ? entry['severity'] : [entry['severity']];
    let worst: Severity | undefined;
    for (const x of sev) {
      const level = severityOf(typeof x === 'object' && x !== null ? (x as Record<string, unknown>)['score'] : x);
      if (level !== undefined && (worst === undefined || SEVERITIES.indexOf(level) > SEVERITIES.indexOf(worst))) worst = level;
    }
    out.push({ id, pkg: packageOfFinding(entry, r as Record<string, unknown>) ?? subjectName, severity: worst });
  }
  return out;
}

// Scanners name the affected package in annotations, as a list of one-key objects or as
// {key, value} pairs; the subject is the fallback.
function packageOfFinding(entry: Record<string, unknown>, outer: Record<string, unknown>): string | undefined {
  const keys = ['package', 'purl', 'packageName', 'packageUrl', 'component'];
  for (const holder of [entry, outer]) {
    for (const k of keys) if (typeof holder[k] === 'string') return holder[k];
    const ann = holder['annotations'];
    const list = Array.isArray(ann) ? ann : ann && typeof ann === 'object' ? [ann] : [];
    for (const a of list) {
      if (typeof a !== 'object' || a === null) continue;
      const o = a as Record<string, unknown>;
      if (typeof o['key'] === 'string' && keys.includes(o['key']) && typeof o['value'] === 'string') return o['value'];
      for (const k of keys) if (typeof o[k] === 'string') return o[k];
    }
  }
  return undefined;
}
