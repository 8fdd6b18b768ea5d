// What Bazel's remote cache protocols counted since the node started, kept apart by protocol
// (Bazel's HTTP cache, the Remote Execution API over gRPC) and by part of the cache (the action
// cache, the content store): a hit rate that mixes action lookups with blob downloads says
// little, since every action hit is followed by several blob hits.

export type Protocol = 'http' | 'grpc';
export type Part = 'ac' | 'cas';
export const PROTOCOLS: readonly Protocol[] = ['http', 'grpc'];
export const PARTS: readonly Part[] = ['ac', 'cas'];

export interface PartCounts {
  /** Lookups answered with the entry: action results, and blobs read (FindMissingBlobs counts as neither: it precedes uploads). */
  hits: number;
  misses: number;
  /** Entries stored. */
  writes: number;
  bytesIn: number;
  bytesOut: number;
}

/** Refusals and the checks behind them, per protocol. */
export interface RefusalCounts {
  /** Content whose SHA-256 or size differs from its digest (nothing stored). */
  digestMismatch: number;
  /** Action results naming content the store does not hold (not stored). */
  missingContent: number;
  /** Action results found naming content evicted since (answered as a miss and removed). */
  dangling: number;
  /** Writes refused because the bound on concurrent writes was reached (429 / RESOURCE_EXHAUSTED). */
  shed: number;
  /** Entries over maxArtifactSize. */
  tooLarge: number;
}

export type BazelStatus = Record<Protocol, Record<Part, PartCounts> & { refused: RefusalCounts }>;

const part = (): PartCounts => ({ hits: 0, misses: 0, writes: 0, bytesIn: 0, bytesOut: 0 });
const refusals = (): RefusalCounts => ({ digestMismatch: 0, missingContent: 0, dangling: 0, shed: 0, tooLarge: 0 });

export function newBazelCounters(): BazelStatus {
  return {
    http: { ac: part(), cas: part(), refused: refusals() },
    grpc: { ac: part(), cas: part(), refused: refusals() },
  };
}
