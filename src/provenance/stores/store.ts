// Attestation stores: where signed envelopes live, addressed as `{store-type}:{instance-name}`.
//
// Layout (the same in an object-store directory and under an artifact repository's base URL), so
// that envelopes from other tools can be put beside ours:
//
//   <type>/<namespace or _>/<name>/<version>/<digestType>/<digest>/<id>.json
//
// Each file is one DSSE envelope (JSON). <id> is [A-Za-z0-9][A-Za-z0-9._-]{0,127}; ours are the hex
// SHA-256 of the envelope bytes. Files are immutable: a new attestation is a new file.

import type { PackageAddress } from '../package.js';

export const STORE_TYPES = ['obj', 'repo'] as const;
export type StoreType = (typeof STORE_TYPES)[number];

export interface AttestationLocation {
  readonly pkg: PackageAddress;
  readonly digestType: string;
  readonly digest: string;
}

export interface AttestationStore {
  /** `obj:<name>` or `repo:<name>`. */
  readonly instance: string;
  readonly type: StoreType;
  /** Writes one envelope; throws ExternalServiceError when the store cannot be reached. */
  put(location: AttestationLocation, id: string, bytes: Uint8Array): Promise<void>;
  /** One envelope's bytes, or undefined when there is none with this id. */
  get(location: AttestationLocation, id: string): Promise<Buffer | undefined>;
  /** ids of the envelopes stored for a package digest (empty when none). */
  list(location: AttestationLocation): Promise<readonly string[]>;
  /** Where an envelope is, for humans and logs (a path inside the store, or a URL). */
  describe(location: AttestationLocation, id: string): string;
}

export const ATTESTATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const INSTANCE = /^(obj|repo):([A-Za-z0-9][A-Za-z0-9._-]{0,63})$/;
export const DIGEST_TYPE = /^[a-z0-9]{1,32}$/;

/** The relative path segments of a package digest's folder. */
export function locationSegments(l: AttestationLocation): string[] {
  return [l.pkg.type, l.pkg.namespace ?? '_', l.pkg.name, l.pkg.version, l.digestType, l.digest];
}

export function fileName(id: string): string {
  return `${id}.json`;
}

/** ids of the `<id>.json` names in a listing. */
export function idsFromNames(names: Iterable<string>): string[] {
  const ids: string[] = [];
  for (const n of names) {
    if (!n.endsWith('.json')) continue;
    const id = n.slice(0, -'.json'.length);
    if (ATTESTATION_ID.test(id)) ids.push(id);
  }
  return ids.sort();
}
