// The cache node's Prometheus metrics (prom-client), read from the same status the UI shows, so
// the two never disagree: hits, misses, writes, bytes in and out, refused and discarded entries,
// evictions and expiries (counters), entries, size and target size (gauges), and the process's
// own metrics. docs/operations.md lists them; Bazel's protocols add counters labelled by
// `protocol` (http, grpc) and `part` (ac, cas), listed in docs/cache-node.md.

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { NodeStatus } from './ui.js';
import { PARTS, PROTOCOLS, type PartCounts, type RefusalCounts } from './bazel-counters.js';

type Numeric = { [K in keyof NodeStatus]: NodeStatus[K] extends number ? K : never }[keyof NodeStatus];

const COUNTERS: readonly (readonly [Numeric, string, string])[] = [
  ['hits', 'buildscope_cache_hits_total', 'GET requests answered with an entry'],
  ['misses', 'buildscope_cache_misses_total', 'GET requests for a key the node does not hold'],
  ['writes', 'buildscope_cache_writes_total', 'Entries stored by PUT'],
  ['bytesIn', 'buildscope_cache_bytes_in_total', 'Bytes of entries stored'],
  ['bytesOut', 'buildscope_cache_bytes_out_total', 'Bytes of entries sent'],
  ['rejectedTooLarge', 'buildscope_cache_rejected_too_large_total', 'Entries over maxArtifactSize answered 413'],
  ['discardedTooLarge', 'buildscope_cache_discarded_too_large_total', 'Entries over maxArtifactSize from Gradle before 7.0, read and discarded'],
  ['evicted', 'buildscope_cache_evictions_total', 'Entries removed to stay within the target size'],
  ['expired', 'buildscope_cache_expired_total', 'Entries removed for their age'],
];

const GAUGES: readonly (readonly [Numeric, string, string])[] = [
  ['entries', 'buildscope_cache_entries', 'Entries held'],
  ['sizeBytes', 'buildscope_cache_size_bytes', 'Bytes of the entries held'],
  ['targetBytes', 'buildscope_cache_target_size_bytes', 'Size the node evicts down to'],
];

const BAZEL_PART_COUNTERS: readonly (readonly [keyof PartCounts, string, string])[] = [
  ['hits', 'buildscope_cache_bazel_hits_total', "Bazel lookups answered with the entry (action results; blobs read, or found by FindMissingBlobs)"],
  ['misses', 'buildscope_cache_bazel_misses_total', 'Bazel lookups of entries the node does not hold (dangling action results included)'],
  ['writes', 'buildscope_cache_bazel_writes_total', 'Bazel entries stored'],
  ['bytesIn', 'buildscope_cache_bazel_bytes_in_total', 'Bytes of Bazel entries stored'],
  ['bytesOut', 'buildscope_cache_bazel_bytes_out_total', 'Bytes of Bazel entries sent'],
];

const REFUSALS: readonly (keyof RefusalCounts)[] = ['digestMismatch', 'missingContent', 'dangling', 'shed', 'tooLarge'];

export function nodeMetrics(status: () => NodeStatus, writesInFlight: () => number = () => 0): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'buildscope_cache_' });
  for (const [key, name, help] of COUNTERS) {
    // The node's counters only grow; a collect sets the Prometheus counter to the same total.
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(status()[key]);
      },
    });
  }
  for (const [key, name, help] of GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(status()[key]);
      },
    });
  }
  for (const [key, name, help] of BAZEL_PART_COUNTERS) {
    new Counter({
      name,
      help,
      labelNames: ['protocol', 'part'],
      registers: [registry],
      collect() {
        this.reset();
        const bazel = status().bazel;
        for (const protocol of PROTOCOLS) for (const part of PARTS) this.inc({ protocol, part }, bazel[protocol][part][key]);
      },
    });
  }
  new Counter({
    name: 'buildscope_cache_bazel_refused_total',
    help: 'Bazel requests refused: digestMismatch, missingContent (action result naming absent content), dangling (action result naming evicted content, answered as a miss), shed (too many writes at once), tooLarge',
    labelNames: ['protocol', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      const bazel = status().bazel;
      for (const protocol of PROTOCOLS) for (const reason of REFUSALS) this.inc({ protocol, reason }, bazel[protocol].refused[reason]);
    },
  });
  new Counter({
    name: 'buildscope_cache_evictions_by_part_total',
    help: 'Entries removed to stay within the target size, by part: cache (Gradle/Maven), ac, cas',
    labelNames: ['part'],
    registers: [registry],
    collect() {
      this.reset();
      const by = status().evictedByPart;
      for (const part of ['cache', 'ac', 'cas'] as const) this.inc({ part }, by[part]);
    },
  });
  new Gauge({
    name: 'buildscope_cache_bazel_writes_in_flight',
    help: "Writes of Bazel's protocols running now (bounded; beyond the bound they are refused)",
    registers: [registry],
    collect() {
      this.set(writesInFlight());
    },
  });
  return registry;
}
