// Policies and policy scans, declared in YAML in the style of Kubernetes resources:
//
//   apiVersion: policy.buildscope.dev/v1
//   kind: BuildToolPolicy            # or SigningKeyPolicy, PredicateTypePolicy, VulnerabilityPolicy, SourceUriPolicy, PolicyScan
//   metadata: { name: approved-tools, labels: { tier: release } }
//   spec: { description: ..., remediation: ..., <kind-specific settings> }
//
// A PolicyScan selects policies by labels (`spec.selector.matchLabels`, all must match).

import { parseAllDocuments } from 'yaml';
import { VULNS_PREDICATE } from './predicates.js';

export const API_VERSION = 'policy.buildscope.dev/v1';

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

interface PolicyBase {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly description: string;
  readonly remediation: string;
}

export interface ToolRule {
  readonly type: string;
  /** Version patterns (`*` matches any text); none: every version. */
  readonly versions: readonly string[];
  /** Lowest allowed version (numeric segments compared), inclusive. */
  readonly minVersion?: string;
}

export type Policy =
  | (PolicyBase & { readonly kind: 'BuildToolPolicy'; readonly tools: readonly ToolRule[] })
  | (PolicyBase & { readonly kind: 'SigningKeyPolicy'; readonly keyIds: readonly string[] })
  | (PolicyBase & { readonly kind: 'PredicateTypePolicy'; readonly predicateTypes: readonly string[] })
  | (PolicyBase & { readonly kind: 'VulnerabilityPolicy'; readonly severity: Severity; readonly predicateType: string })
  | (PolicyBase & { readonly kind: 'SourceUriPolicy'; readonly uris: readonly string[] });

export type PolicyKind = Policy['kind'];

/** The `<policy_type>` segment of a policy URI. */
export const POLICY_TYPES: Readonly<Record<PolicyKind, string>> = {
  BuildToolPolicy: 'build-tool',
  SigningKeyPolicy: 'signing-key',
  PredicateTypePolicy: 'predicate-type',
  VulnerabilityPolicy: 'vulnerability',
  SourceUriPolicy: 'source-uri',
};

export interface PolicyScan {
  readonly name: string;
  readonly description: string;
  readonly matchLabels: Readonly<Record<string, string>>;
}

export interface PolicySet {
  readonly policies: readonly Policy[];
  readonly scans: ReadonlyMap<string, PolicyScan>;
}

export const EMPTY_POLICY_SET: PolicySet = { policies: [], scans: new Map() };

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

type Obj = Record<string, unknown>;
const NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

function obj(v: unknown, where: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new PolicyError(`${where} must be a mapping`);
  return v as Obj;
}

function strings(v: unknown, where: string, required: boolean): string[] {
  if (v === undefined || v === null) {
    if (required) throw new PolicyError(`${where} is required`);
    return [];
  }
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' && typeof x !== 'number')) throw new PolicyError(`${where} must be a list of strings`);
  const out = v.map(String);
  if (required && out.length === 0) throw new PolicyError(`${where} must not be empty`);
  return out;
}

function labelsOf(v: unknown, where: string): Record<string, string> {
  const o = obj(v, where);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(o)) {
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') throw new PolicyError(`${where}.${k} must be a string`);
    out[k] = String(x);
  }
  return out;
}

/** Parses a multi-document YAML text of policies and policy scans. */
export function parsePolicies(text: string, source = 'policies'): PolicySet {
  const policies: Policy[] = [];
  const scans = new Map<string, PolicyScan>();
  const seen = new Set<string>();
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new PolicyError(`${source}: not a YAML stream`);
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) throw new PolicyError(`${source}: document ${i + 1}: ${doc.errors[0]!.message}`);
    const raw = doc.toJS() as unknown;
    if (raw === null || raw === undefined) continue;
    const o = obj(raw, `${source}: document ${i + 1}`);
    const meta = obj(o['metadata'], `${source}: document ${i + 1}.metadata`);
    const name = meta['name'];
    const where = `${source}: ${String(o['kind'])} ${typeof name === 'string' ? name : `#${i + 1}`}`;
    if (o['apiVersion'] !== API_VERSION) throw new PolicyError(`${where}: apiVersion must be ${API_VERSION}`);
    if (typeof name !== 'string' || !NAME.test(name)) throw new PolicyError(`${where}: metadata.name must be a lower-case DNS-style name`);
    const labels = labelsOf(meta['labels'], `${where}: metadata.labels`);
    const spec = obj(o['spec'], `${where}: spec`);
    const description = typeof spec['description'] === 'string' ? spec['description'] : '';
    const remediation = typeof spec['remediation'] === 'string' ? spec['remediation'] : '';
    const base: PolicyBase = { name, labels, description, remediation };
    const kind = o['kind'];
    const key = `${String(kind)}/${name}`;
    if (seen.has(key)) throw new PolicyError(`${where}: declared twice`);
    seen.add(key);
    switch (kind) {
      case 'PolicyScan': {
        const selector = obj(spec['selector'], `${where}: spec.selector`);
        scans.set(name, { name, description, matchLabels: labelsOf(selector['matchLabels'], `${where}: spec.selector.matchLabels`) });
        break;
      }
      case 'BuildToolPolicy': {
        const tools = spec['tools'];
        if (!Array.isArray(tools) || tools.length === 0) throw new PolicyError(`${where}: spec.tools must list at least one tool`);
        policies.push({
          ...base,
          kind,
          tools: tools.map((t, j) => {
            const r = obj(t, `${where}: spec.tools[${j}]`);
            if (typeof r['type'] !== 'string') throw new PolicyError(`${where}: spec.tools[${j}].type is required`);
            const min = r['minVersion'];
            return {
              type: r['type'],
              versions: strings(r['versions'], `${where}: spec.tools[${j}].versions`, false),
              ...(min !== undefined && min !== null ? { minVersion: String(min) } : {}),
            };
          }),
        });
        break;
      }
      case 'SigningKeyPolicy':
        policies.push({ ...base, kind, keyIds: strings(spec['keyIds'], `${where}: spec.keyIds`, true).map((k) => k.toLowerCase()) });
        break;
      case 'PredicateTypePolicy':
        policies.push({ ...base, kind, predicateTypes: strings(spec['predicateTypes'], `${where}: spec.predicateTypes`, true) });
        break;
      case 'VulnerabilityPolicy': {
        const severity = String(spec['severity'] ?? 'high').toLowerCase();
        if (!(SEVERITIES as readonly string[]).includes(severity)) throw new PolicyError(`${where}: spec.severity must be one of ${SEVERITIES.join(', ')}`);
        const predicateType = typeof spec['predicateType'] === 'string' ? spec['predicateType'] : VULNS_PREDICATE;
        policies.push({ ...base, kind, severity: severity as Severity, predicateType });
        break;
      }
      case 'SourceUriPolicy':
        policies.push({ ...base, kind, uris: strings(spec['uris'], `${where}: spec.uris`, true) });
        break;
      default:
        throw new PolicyError(`${where}: unknown kind (known: PolicyScan, ${Object.keys(POLICY_TYPES).join(', ')})`);
    }
  }
  return { policies, scans };
}

/** The policies a scan selects: those whose labels include every label of the selector. */
export function selectPolicies(set: PolicySet, scan: PolicyScan): Policy[] {
  return set.policies.filter((p) => Object.entries(scan.matchLabels).every(([k, v]) => p.labels[k] === v));
}

export function policyUri(p: Policy): string {
  return `/policies/${POLICY_TYPES[p.kind]}/${p.name}`;
}
