// Where publish reads builds from: the local store (inside `buildscope serve`) or a Buildscope
// server's REST API (standalone `buildscope provenance --server URL`). Publish code is one.

import { NAMED_FIELDS, type ToolType } from '../query/catalog.js';
import type { BuildAttestation, BuildAttributes, BuildStore, BuildWithAttributes, Visibility } from '../store/types.js';
import type { Diagnostic } from '../query/diagnostic.js';
import { BadRequestError, badBuildScanQuery, ExternalServiceError } from './errors.js';
import { projectVisible } from '../store/search/visibility.js';

export interface BuildSource {
  /** One build with attributes, or undefined when it does not exist or is not visible. */
  getBuild(id: string, visibility: Visibility): Promise<BuildWithAttributes | undefined>;
  /** Builds matching a query in the advanced search syntax; BadRequestError for a bad query. */
  findBuilds(query: string, visibility: Visibility, maxBuilds: number): Promise<readonly BuildWithAttributes[]>;
  /** Notes an attestation made from a build, for the build's page. */
  noteAttestation(buildId: string, attestation: BuildAttestation): Promise<void>;
}

/** How a query text becomes a checked expression (the query package's parseQuery). */
export type QueryParser = (text: string) => {
  readonly ok: boolean;
  readonly expr?: import('../query/checked.js').CheckedExpr;
  readonly diagnostics: readonly Diagnostic[];
};

export class LocalBuildSource implements BuildSource {
  constructor(
    private readonly store: BuildStore,
    private readonly parse: QueryParser,
  ) {}

  async getBuild(id: string, visibility: Visibility): Promise<BuildWithAttributes | undefined> {
    return this.store.getBuild(id, visibility, { withAttributes: true });
  }

  noteAttestation(buildId: string, attestation: BuildAttestation): Promise<void> {
    return this.store.recordAttestation(buildId, attestation);
  }

  async findBuilds(query: string, visibility: Visibility, maxBuilds: number): Promise<readonly BuildWithAttributes[]> {
    const parsed = this.parse(query);
    if (!parsed.ok || !parsed.expr) throw badBuildScanQuery(query, parsed.diagnostics);
    return (await this.store.listBuilds({ query: parsed.expr, visibility, withAttributes: true, maxBuilds, reverse: true })) as BuildWithAttributes[];
  }
}

/** A build summary as the REST API returns it with `models=attributes`. */
interface ApiBuild {
  readonly id: string;
  readonly availableAt: number;
  readonly buildToolType: ToolType;
  readonly buildToolVersion: string;
  readonly buildAgentVersion: string;
  readonly project?: string | null;
  readonly attributes?: BuildAttributes;
}

/**
 * Reads builds over a Buildscope server's REST API with an access key. The server applies the
 * key's visibility; the caller's `visibility` is applied here on top, by each build's project, so
 * a restricted caller of a standalone service reads no more than she could read on the server.
 */
export class RemoteBuildSource implements BuildSource {
  private readonly base: string;

  constructor(
    serverUrl: string,
    private readonly accessKey: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.base = serverUrl.replace(/\/+$/, '');
  }

  /**
   * The builds live on another server, whose pages this service cannot write to: a standalone
   * service's attestations are not listed on the build's page (docs/provenance.md).
   */
  async noteAttestation(): Promise<void> {}

  private async get(path: string): Promise<Response> {
    const url = `${this.base}${path}`;
    try {
      return await fetch(url, {
        headers: { authorization: `Bearer ${this.accessKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new ExternalServiceError(`build analytics server ${this.base}: ${cause?.code ?? cause?.message ?? (e as Error).message}`, { cause: e });
    }
  }

  async getBuild(id: string, visibility: Visibility): Promise<BuildWithAttributes | undefined> {
    const res = await this.get(`/api/builds/${encodeURIComponent(id)}?models=attributes`);
    if (res.status === 404) {
      await res.arrayBuffer();
      return undefined;
    }
    if (!res.ok) throw new ExternalServiceError(`build analytics server ${this.base}: GET /api/builds/${id} answered HTTP ${res.status}`);
    const build = toBuild((await res.json()) as ApiBuild);
    return projectVisible(visibility, build.project) ? build : undefined;
  }

  async findBuilds(query: string, visibility: Visibility, maxBuilds: number): Promise<readonly BuildWithAttributes[]> {
    const res = await this.get(`/api/builds?query=${encodeURIComponent(query)}&models=attributes&maxBuilds=${maxBuilds}&reverse=true`);
    if (res.status === 400) {
      const body = (await res.json().catch(() => ({}))) as { detail?: string; diagnostics?: unknown };
      // The server's diagnostics, worded here as every face words them.
      if (Array.isArray(body.diagnostics) && body.diagnostics.length > 0) throw badBuildScanQuery(query, body.diagnostics as Diagnostic[]);
      throw new BadRequestError(`Invalid request content. Bad build scan query ${JSON.stringify(query)}: ${body.detail ?? 'rejected by the server'}`);
    }
    if (!res.ok) throw new ExternalServiceError(`build analytics server ${this.base}: GET /api/builds answered HTTP ${res.status}`);
    const body = (await res.json()) as unknown;
    const list = Array.isArray(body) ? body : ((body as { builds?: unknown }).builds ?? []);
    return (list as ApiBuild[]).map(toBuild).filter((b) => projectVisible(visibility, b.project));
  }
}

function toBuild(b: ApiBuild): BuildWithAttributes {
  return {
    id: b.id,
    availableAt: b.availableAt,
    toolType: b.buildToolType,
    toolVersion: b.buildToolVersion,
    agentVersion: b.buildAgentVersion,
    project: b.project ?? (typeof b.attributes?.[NAMED_FIELDS.project.name] === 'string' ? (b.attributes[NAMED_FIELDS.project.name] as string) : null),
    seq: 0,
    attributes: b.attributes ?? {},
  };
}
