// The cache node's Prometheus metrics (prom-client), read from the same status the UI shows, so
// the two never disagree: hits, misses, writes, bytes in and out, refused and discarded entries,
// evictions and expiries (counters), entries, size and target size (gauges), and the process's
// own metrics. docs/operations.md lists them.

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { NodeStatus } from './ui.js';

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

export function nodeMetrics(status: () => NodeStatus): Registry {
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
  return registry;
}
