// The node's own page: what is cached, how well it hits, and the configuration in force.

import type { NodeConfig } from './config.js';
import type { DiskStore } from './storage.js';
import type { BazelStatus } from './bazel-counters.js';

export interface NodeStatus {
  readonly version: string;
  readonly startedAt: number;
  readonly entries: number;
  readonly sizeBytes: number;
  readonly targetBytes: number;
  readonly hits: number;
  readonly misses: number;
  readonly writes: number;
  readonly rejectedTooLarge: number;
  /** Oversized entries from Gradle before 7.0: read, discarded and answered 202. */
  readonly discardedTooLarge: number;
  /** Bytes of entries stored (PUT bodies) and sent (GET hits). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly evicted: number;
  /** Evictions of Gradle/Maven entries (`cache`), Bazel action results (`ac`) and content (`cas`). */
  readonly evictedByPart: { readonly cache: number; readonly ac: number; readonly cas: number };
  readonly expired: number;
  /** Bazel's HTTP and gRPC protocols, per part of the cache. */
  readonly bazel: BazelStatus;
  readonly config: ConfigSummary;
}

export interface ConfigSummary {
  readonly anonymousLevel: string;
  readonly users: readonly { name: string; level: string; note: string | null }[];
  readonly maxArtifactSizeMiB: number;
  readonly maxEntryAgeInHours: number | null;
  readonly targetSize: string;
  readonly freeSpaceBufferSizeMiB: number;
  readonly registration: string;
  readonly uiAccess: string;
}

export function summarize(config: NodeConfig): ConfigSummary {
  return {
    anonymousLevel: config.anonymousLevel,
    users: [...config.users.values()].map((u) => ({ name: u.name, level: u.level, note: u.note })),
    maxArtifactSizeMiB: config.maxArtifactMiB,
    maxEntryAgeInHours: config.maxEntryAgeHours,
    targetSize: config.targetSize.type === 'fixed' ? `fixed, ${config.targetSize.sizeMiB} MiB` : 'maxAvailable',
    freeSpaceBufferSizeMiB: config.freeSpaceBufferMiB,
    registration: config.registration ? `${config.registration.serverAddress} (as ${config.registration.nodeAddress})` : 'none',
    uiAccess: config.uiAccess.type,
  };
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function bytes(n: number): string {
  if (!Number.isFinite(n)) return 'unbounded';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function renderPage(status: NodeStatus, store: DiskStore, now: number): string {
  const lookups = status.hits + status.misses;
  const ratio = lookups === 0 ? '–' : `${((100 * status.hits) / lookups).toFixed(1)} %`;
  const rows = store
    .recent(50)
    .map(({ key, info }) => `<tr><td><code>${esc(key)}</code></td><td>${bytes(info.size)}</td><td>${new Date(info.createdAt).toISOString()}</td><td>${Math.round((now - info.lastAccess) / 1000)} s ago</td></tr>`)
    .join('');
  const c = status.config;
  const users = c.users.length === 0 ? 'none' : c.users.map((u) => `${esc(u.name)} (${u.level}${u.note ? `, ${esc(u.note)}` : ''})`).join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Buildscope cache node</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #ddd}dt{font-weight:600}</style></head>
<body><h1>Buildscope cache node</h1>
<h2>Cache</h2>
<dl>
<dt>Entries</dt><dd id="entries">${status.entries}</dd>
<dt>Size</dt><dd id="size">${bytes(status.sizeBytes)} of ${bytes(status.targetBytes)}</dd>
<dt>Hits</dt><dd id="hits">${status.hits}</dd>
<dt>Misses</dt><dd id="misses">${status.misses}</dd>
<dt>Hit ratio</dt><dd>${ratio}</dd>
<dt>Writes</dt><dd>${status.writes} (refused as too large: ${status.rejectedTooLarge}; discarded as too large for Gradle before 7.0: ${status.discardedTooLarge})</dd>
<dt>Evicted / expired</dt><dd>${status.evicted} / ${status.expired}</dd>
</dl>
<h2>Configuration</h2>
<dl>
<dt>Anonymous access</dt><dd>${c.anonymousLevel}</dd>
<dt>Users</dt><dd>${users}</dd>
<dt>Largest artifact</dt><dd>${c.maxArtifactSizeMiB} MiB</dd>
<dt>Maximum entry age</dt><dd>${c.maxEntryAgeInHours === null ? 'none' : `${c.maxEntryAgeInHours} h`}</dd>
<dt>Target size</dt><dd>${esc(c.targetSize)} (free space buffer ${c.freeSpaceBufferSizeMiB} MiB)</dd>
<dt>Registration</dt><dd>${esc(c.registration)}</dd>
<dt>UI access</dt><dd>${c.uiAccess}</dd>
</dl>
<h2>Most recently used entries</h2>
<table><thead><tr><th>Key</th><th>Size</th><th>Stored</th><th>Last used</th></tr></thead><tbody>${rows}</tbody></table>
<p>Node ${esc(status.version)}, up since ${new Date(status.startedAt).toISOString()}. JSON: <a href="/status.json">/status.json</a></p>
</body></html>`;
}
