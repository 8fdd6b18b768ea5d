// The provenance service: publish (builds -> signed statements -> every store), evaluate (a
// policy scan over the package's verified attestations) and fetch (one stored envelope).
// HTTP-free: the fastify plugin and the CLI call these methods.

import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { BuildWithAttributes, Visibility } from '../store/types.js';
import type { BuildSource } from './build-source.js';
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from './dsse.js';
import { DomainError } from '../errors/domain.js';
import { BadRequestError, ExternalServiceError } from './errors.js';
import { evaluatePolicy, type CountedAttestation, type PackageFacts, type PolicyResult } from './evaluate.js';
import type { KeyRing } from './keys.js';
import { packageUrl, type PackageAddress } from './package.js';
import { selectPolicies, type Policy, type PolicySet } from './policies.js';
import { EvaluationPool } from './pool.js';
import { BUILD_TOOL_PREDICATE, buildToolPredicate, SLSA_PROVENANCE_V1, slsaProvenance } from './predicates.js';
import { STATEMENT_V1, subjectHasSha256, type Statement } from './statement.js';
import type { AttestationLocation, AttestationStore } from './stores/store.js';
import { verifyAttestation } from './verify.js';
import { boundTo, buildOrigin, UNRESTRICTED, type Reader } from './access.js';
import { normaliseRepository } from './package.js';

export interface PublishRequest {
  readonly sha256: string;
  readonly repositoryUrl: string;
  readonly buildIds: readonly string[];
  readonly queries: readonly string[];
}

/** A signed envelope made from one build, ready to be written. */
export interface MadeEnvelope {
  readonly buildId: string;
  readonly predicateType: string;
  readonly id: string;
  readonly bytes: Buffer;
  /** The statement's subject: the package's purl. */
  readonly packageUrl: string;
}

/** One attestation written to one store. */
export interface PublishRecord {
  readonly status: 'SUCCESS';
  readonly details: {
    readonly store: string;
    readonly id: string;
    readonly attestationUri: string;
    readonly predicateType: string;
    readonly buildId: string;
    readonly location: string;
  };
}

export class UnknownPolicyScanError extends DomainError {
  readonly kind = 'not-found';
}

export interface ProvenanceServiceOptions {
  readonly keys: KeyRing;
  readonly stores: readonly AttestationStore[];
  readonly policies: PolicySet;
  readonly builds: BuildSource;
  /** Link to a build, the build ID appended; a function when it is known only once the server listens. */
  readonly buildUriBase: string | (() => string);
  readonly pool: EvaluationPool;
  readonly logger?: Logger;
  /** Builds taken from each query, newest first. */
  readonly maxBuildsPerQuery?: number;
}

const WRITE_CONCURRENCY = 8;

type Cached = { readonly kind: 'counted'; readonly att: CountedAttestation } | { readonly kind: 'skipped'; readonly reason: string };

/** The fetch path of an attestation (the `attestationUri` of results). */
export function attestationUri(pkg: PackageAddress, digestType: string, digest: string, instance: string, id: string): string {
  // ':' and '@' are legal in a path segment; keep `sha256:…` and `obj:main` readable.
  const e = (s: string) => encodeURIComponent(s).replace(/%3A/gi, ':').replace(/%40/g, '@');
  const ns = pkg.namespace !== undefined ? `/${e(pkg.namespace)}` : '';
  return `/packages/${e(pkg.type)}${ns}/${e(pkg.name)}/${e(pkg.version)}/${e(digestType)}:${e(digest)}/attestations/${e(instance)}/${e(id)}`;
}

export function envelopeId(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class ProvenanceService {
  readonly pool: EvaluationPool;
  private readonly stores: ReadonlyMap<string, AttestationStore>;
  // Verification results by store, folder and id. Files are immutable (ours are named by their
  // content hash), so a result never goes stale; the map is bounded by clearing it when full.
  private readonly verified = new Map<string, Cached>();
  private static readonly CACHE_LIMIT = 100_000;
  // The counted attestations of a folder, reused while every store returns the same listing (the
  // stores hand back the same array while a folder is unchanged), and the results of each scan
  // over them: repeated evaluations of an unchanged package cost a stat per store.
  private readonly countedMemo = new Map<string, { readonly lists: readonly (readonly string[])[]; readonly counted: CountedAttestation[] }>();
  private readonly resultsMemo = new WeakMap<readonly CountedAttestation[], Map<string, readonly PolicyResult[]>>();

  constructor(private readonly options: ProvenanceServiceOptions) {
    this.pool = options.pool;
    this.stores = new Map(options.stores.map((s) => [s.instance, s]));
  }

  get storeInstances(): readonly string[] {
    return [...this.stores.keys()];
  }

  get keys(): KeyRing {
    return this.options.keys;
  }

  hasPolicyScan(name: string): boolean {
    return this.options.policies.scans.has(name);
  }

  // ---- publish ----

  /** Reads the builds named by ids and queries (de-duplicated, in request order). */
  async resolveBuilds(request: PublishRequest, visibility: Visibility): Promise<BuildWithAttributes[]> {
    const builds = new Map<string, BuildWithAttributes>();
    for (const id of request.buildIds) {
      const b = await this.options.builds.getBuild(id, visibility);
      if (!b) throw new BadRequestError(`Invalid request content. Build scan ${id} does not exist or is not visible.`);
      builds.set(b.id, b);
    }
    for (const q of request.queries) {
      for (const b of await this.options.builds.findBuilds(q, visibility, this.options.maxBuildsPerQuery ?? 100)) builds.set(b.id, b);
    }
    return [...builds.values()];
  }

  /** The signed envelopes for a package made from builds: build-tool and SLSA provenance per build. */
  makeEnvelopes(pkg: PackageAddress, request: PublishRequest, builds: readonly BuildWithAttributes[]): MadeEnvelope[] {
    const purl = packageUrl(pkg, request.sha256, request.repositoryUrl);
    const subject = [{ name: purl, digest: { sha256: request.sha256 } }];
    const out: MadeEnvelope[] = [];
    const base = typeof this.options.buildUriBase === 'function' ? this.options.buildUriBase() : this.options.buildUriBase;
    for (const b of builds) {
      const buildUri = `${base}${encodeURIComponent(b.id)}`;
      const statements: Statement[] = [
        { _type: STATEMENT_V1, subject, predicateType: BUILD_TOOL_PREDICATE, predicate: { ...buildToolPredicate(b, buildUri) } },
        { _type: STATEMENT_V1, subject, predicateType: SLSA_PROVENANCE_V1, predicate: slsaProvenance(b, buildUri, request.repositoryUrl) },
      ];
      for (const s of statements) {
        const envelope = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(s)), this.options.keys.active);
        const bytes = Buffer.from(JSON.stringify(envelope));
        out.push({ buildId: b.id, predicateType: s.predicateType, id: envelopeId(bytes), bytes, packageUrl: purl });
      }
    }
    return out;
  }

  /**
   * Writes every envelope to every store, yielding one record per write in request order. Up to
   * WRITE_CONCURRENCY writes are in flight at once: stores are I/O-bound (disk, HTTP).
   */
  async *write(pkg: PackageAddress, sha256: string, envelopes: readonly MadeEnvelope[]): AsyncGenerator<PublishRecord> {
    const location: AttestationLocation = { pkg, digestType: 'sha256', digest: sha256 };
    const tasks = envelopes.flatMap((e) => [...this.stores.values()].map((store) => ({ e, store })));
    const started: Promise<PublishRecord>[] = [];
    const launch = () => {
      const { e, store } = tasks[started.length]!;
      const p = store.put(location, e.id, e.bytes).then(async (): Promise<PublishRecord> => {
        this.options.logger?.debug({ store: store.instance, id: e.id }, 'attestation stored');
        const uri = attestationUri(pkg, 'sha256', sha256, store.instance, e.id);
        // For the build's page; the attestation itself is stored, so a failure here only logs.
        await this.options.builds
          .noteAttestation(e.buildId, { attestationUri: uri, packageUrl: e.packageUrl, digest: `sha256:${sha256}`, predicateType: e.predicateType, store: store.instance, publishedAt: Date.now() })
          .catch((err: unknown) => this.options.logger?.warn({ err, buildId: e.buildId, attestation: uri }, 'could not note the attestation on its build'));
        return {
          status: 'SUCCESS',
          details: {
            store: store.instance,
            id: e.id,
            attestationUri: uri,
            predicateType: e.predicateType,
            buildId: e.buildId,
            location: store.describe(location, e.id),
          },
        };
      });
      // Handled here so that a failure of a later write is not "unhandled" while we await an earlier one.
      p.catch(() => undefined);
      started.push(p);
    };
    while (started.length < Math.min(WRITE_CONCURRENCY, tasks.length)) launch();
    for (let i = 0; i < tasks.length; i++) {
      const record = await started[i]!;
      if (started.length < tasks.length) launch();
      yield record;
    }
  }

  // ---- evaluate ----

  /** The policies of a scan; UnknownPolicyScanError when there is no such scan. */
  policiesOf(scanName: string): Policy[] {
    const scan = this.options.policies.scans.get(scanName);
    if (!scan) throw new UnknownPolicyScanError(`No policy scan named '${scanName}' is defined.`);
    return selectPolicies(this.options.policies, scan);
  }

  /**
   * The attestations that count for a package: from every store, de-duplicated by id, signature
   * verified by a trusted key and with a subject carrying the package's sha256. Others are skipped
   * (and logged), never fatal: one foreign envelope must not hide the rest.
   */
  async countedAttestations(pkg: PackageAddress, sha256: string): Promise<CountedAttestation[]> {
    const location: AttestationLocation = { pkg, digestType: 'sha256', digest: sha256 };
    const lists = await Promise.all([...this.stores.values()].map(async (s) => ({ store: s, ids: await s.list(location) })));
    const folder = `${pkg.type}\0${pkg.namespace ?? ''}\0${pkg.name}\0${pkg.version}\0${sha256}`;
    const memo = this.countedMemo.get(folder);
    if (memo && memo.lists.length === lists.length && memo.lists.every((ids, i) => ids === lists[i]!.ids)) return memo.counted;
    const out: CountedAttestation[] = [];
    const seen = new Set<string>();
    for (const { store, ids } of lists) {
      for (const id of ids) {
        if (seen.has(id)) continue;
        const key = `${store.instance}\0${folder}\0${id}`;
        let entry = this.verified.get(key);
        if (!entry) {
          const bytes = await store.get(location, id);
          if (!bytes) continue;
          entry = this.judge(pkg, sha256, store.instance, id, bytes);
          if (this.verified.size >= ProvenanceService.CACHE_LIMIT) this.verified.clear();
          this.verified.set(key, entry);
        }
        if (entry.kind === 'counted') {
          seen.add(id);
          out.push(entry.att);
        }
      }
    }
    if (this.countedMemo.size >= 10_000) this.countedMemo.clear();
    this.countedMemo.set(folder, { lists: lists.map((l) => l.ids), counted: out });
    return out;
  }

  private judge(pkg: PackageAddress, sha256: string, instance: string, id: string, bytes: Buffer): Cached {
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      return this.skip(instance, id, 'not JSON');
    }
    const v = verifyAttestation(json, this.options.keys.verification);
    if (!v.ok) return this.skip(instance, id, `${v.reason}: ${v.message}`);
    if (!subjectHasSha256(v.statement, sha256)) return this.skip(instance, id, 'subject digest is not the package sha256');
    return {
      kind: 'counted',
      att: { id, instance, uri: attestationUri(pkg, 'sha256', sha256, instance, id), statement: v.statement, keyids: v.keyids },
    };
  }

  private skip(instance: string, id: string, reason: string): Cached {
    this.options.logger?.info({ store: instance, id, reason }, 'attestation skipped');
    return { kind: 'skipped', reason };
  }

  /**
   * Evaluates a policy scan over the attestations bound to the requested repository that the
   * reader may read (access.ts); results come one per policy, in declaration order.
   */
  async evaluate(
    pkg: PackageAddress,
    scanName: string,
    facts: PackageFacts,
    reader: Reader = UNRESTRICTED,
  ): Promise<{ readonly policies: readonly Policy[]; readonly results: Iterable<PolicyResult> }> {
    const policies = this.policiesOf(scanName);
    const all = await this.countedAttestations(pkg, facts.sha256);
    const bound = all.filter((a) => boundTo(a.statement, facts.sha256, facts.repositoryUrl, reader));
    if (reader.kind === 'restricted') {
      // Per reader and build visibility: not memoised.
      const readable = await this.readableBy(bound, reader);
      return { policies, results: policies.map((p) => evaluatePolicy(p, readable, facts)) };
    }
    let byScan = this.resultsMemo.get(all);
    if (!byScan) {
      byScan = new Map();
      this.resultsMemo.set(all, byScan);
    }
    const key = `${scanName}\0${normaliseRepository(facts.repositoryUrl)}`;
    const known = byScan.get(key);
    if (known) return { policies, results: known };
    if (byScan.size >= 100) byScan.clear();
    const done: PolicyResult[] = [];
    const memo = byScan;
    return {
      policies,
      // Lazily, so that NDJSON lines leave as each policy is judged; memoised once complete.
      results: (function* () {
        for (const p of policies) {
          const r = evaluatePolicy(p, bound, facts);
          done.push(r);
          yield r;
        }
        memo.set(key, done);
      })(),
    };
  }

  /**
   * The attestations a restricted reader may read: those made from a build she may see, or from
   * no build of ours. One whose build cannot be told is left out: it may describe any build.
   */
  private async readableBy(attestations: readonly CountedAttestation[], reader: Reader & { kind: 'restricted' }): Promise<CountedAttestation[]> {
    const visible = new Map<string, Promise<boolean>>();
    const sees = (id: string): Promise<boolean> => {
      let p = visible.get(id);
      if (!p) {
        p = this.options.builds.getBuild(id, reader.visibility).then((b) => b !== undefined);
        visible.set(id, p);
      }
      return p;
    };
    const out: CountedAttestation[] = [];
    for (const a of attestations) if (await this.mayRead(a.statement, reader, sees)) out.push(a);
    return out;
  }

  /** Whether a reader may read a statement as far as the build it was made from goes. */
  async mayRead(statement: Statement, reader: Reader, sees?: (id: string) => Promise<boolean>): Promise<boolean> {
    if (reader.kind === 'unrestricted') return true;
    const origin = buildOrigin(statement);
    switch (origin.kind) {
      case 'none':
        return true;
      case 'unknown':
        return false;
      case 'build':
        return sees ? sees(origin.id) : (await this.options.builds.getBuild(origin.id, reader.visibility)) !== undefined;
    }
  }

  // ---- fetch ----

  isConfiguredInstance(instance: string): boolean {
    return this.stores.has(instance);
  }

  /** One stored envelope (bytes as stored), or undefined. */
  async fetch(pkg: PackageAddress, digestType: string, digest: string, instance: string, id: string): Promise<Buffer | undefined> {
    const store = this.stores.get(instance);
    if (!store) return undefined;
    return store.get({ pkg, digestType, digest }, id);
  }

  /** The verified statement of an envelope, when a trusted key signed it (for read scoping). */
  verifiedStatement(bytes: Buffer): Statement | undefined {
    try {
      const v = verifyAttestation(JSON.parse(bytes.toString('utf8')), this.options.keys.verification);
      return v.ok ? v.statement : undefined;
    } catch {
      return undefined;
    }
  }
}

export { ExternalServiceError };
