// Canonical JSON (object keys sorted, no whitespace) and content hashes. Two sends of the same
// build compare equal whatever the key order of their JSON, so a re-send is recognised.

import { hash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += canonicalJson(value[i]);
    }
    return out + ']';
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(k) + ':' + canonicalJson(v);
  }
  return out + '}';
}

export interface BuildHeader {
  readonly toolType: string;
  readonly toolVersion: string;
  readonly agentVersion: string;
}

/** Hash of a build's header and the canonical JSON of its events (`[...]`). */
export function contentHash(header: BuildHeader, eventsJson: string): string {
  // One-shot hash(): much cheaper per call than createHash().update()...digest().
  return hash('sha256', `${header.toolType}\0${header.toolVersion}\0${header.agentVersion}\0${eventsJson}`, 'base64url');
}

/** Joins the canonical JSON arrays of consecutive chunks into the array of all their events. */
export function joinEventArrays(chunks: readonly string[]): string {
  const inner = chunks.map((c) => c.slice(1, -1)).filter((c) => c.length > 0);
  return '[' + inner.join(',') + ']';
}
