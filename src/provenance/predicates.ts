// Predicates made from builds: a Buildscope build-tool predicate and SLSA provenance v1.

import type { BuildWithAttributes } from '../store/types.js';
import { NAMED_FIELDS } from '../query/catalog.js';

export const BUILD_TOOL_PREDICATE = 'https://buildscope.dev/attestation/build-tool/v1';
export const SLSA_PROVENANCE_V1 = 'https://slsa.dev/provenance/v1';
export const VULNS_PREDICATE = 'https://in-toto.io/attestation/vulns/v0.2';

export interface BuildToolPredicate {
  readonly toolType: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly buildId: string;
  readonly buildUri: string;
}

export function buildToolPredicate(build: BuildWithAttributes, buildUri: string): BuildToolPredicate {
  return { toolType: build.toolType, toolVersion: build.toolVersion, agentVersion: build.agentVersion, buildId: build.id, buildUri };
}

/** Custom values builds commonly carry for their sources (names compared case-insensitively). */
const SOURCE_URI_VALUES = ['git repository', 'gitrepository', 'vcs url', 'scm url', 'repository', 'source uri'];
const COMMIT_VALUES = ['git commit id', 'gitcommitid', 'git commit', 'commit', 'revision', 'vcs revision'];

function customValues(build: BuildWithAttributes): readonly { readonly name: string; readonly value: string }[] {
  const v = build.attributes[NAMED_FIELDS.value.name];
  if (!Array.isArray(v)) return [];
  return v.filter((x): x is { name: string; value: string } => typeof x === 'object' && x !== null && 'name' in x && 'value' in x);
}

function iso(ms: unknown): string | undefined {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/**
 * SLSA provenance v1. The builder is the build tool; the source (when the build recorded one as a
 * custom value) is a resolved dependency; the package repository is an external parameter.
 */
export function slsaProvenance(build: BuildWithAttributes, buildUri: string, repositoryUrl: string): Record<string, unknown> {
  const values = customValues(build);
  const find = (names: readonly string[]) => values.find((v) => names.includes(v.name.toLowerCase()))?.value;
  const sourceUri = find(SOURCE_URI_VALUES);
  const commit = find(COMMIT_VALUES);
  const start = build.attributes[NAMED_FIELDS.buildStartTime.name];
  const duration = build.attributes[NAMED_FIELDS.buildDuration.name];
  const startedOn = iso(start);
  const finishedOn = typeof start === 'number' && typeof duration === 'number' ? iso(start + duration) : iso(build.availableAt);
  const tags = build.attributes[NAMED_FIELDS.tag.name];
  const requested = build.attributes[NAMED_FIELDS.requested.name];
  const hostname = build.attributes[NAMED_FIELDS.hostname.name];
  return {
    buildDefinition: {
      buildType: `https://buildscope.dev/build-types/${build.toolType}/v1`,
      externalParameters: {
        repository: repositoryUrl,
        ...(build.project !== null ? { project: build.project } : {}),
        ...(typeof requested === 'string' || Array.isArray(requested) ? { requested } : {}),
      },
      internalParameters: {
        ...(typeof hostname === 'string' ? { hostname } : {}),
        ...(Array.isArray(tags) ? { tags } : {}),
      },
      resolvedDependencies: sourceUri ? [{ uri: sourceUri, ...(commit ? { digest: { gitCommit: commit } } : {}) }] : [],
    },
    runDetails: {
      builder: {
        id: `https://buildscope.dev/builders/${build.toolType}`,
        version: { [build.toolType]: build.toolVersion, agent: build.agentVersion },
      },
      metadata: {
        invocationId: buildUri,
        ...(startedOn ? { startedOn } : {}),
        ...(finishedOn ? { finishedOn } : {}),
      },
      byproducts: [],
    },
  };
}
