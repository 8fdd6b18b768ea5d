// The `provenance` section of the server configuration, with its defaults. Parsed here from
// `unknown`; every mistake names its path.

import { isAbsolute, join, resolve } from 'node:path';
import { KEY_ALGORITHMS, type KeyAlgorithm, type KeyConfig } from './keys.js';
import type { RepositoryStoreOptions } from './stores/repository-store.js';
import { INSTANCE } from './stores/store.js';

export type StoreConfig =
  | { readonly type: 'obj'; readonly instance: string; readonly name: string; readonly directory: string }
  | ({ readonly type: 'repo'; readonly instance: string; readonly name: string } & RepositoryStoreOptions);

export interface ProvenanceConfig {
  readonly keys: KeyConfig;
  /** Where attestations are written (every one of them) and read from. */
  readonly stores: readonly StoreConfig[];
  /** YAML file of policies and policy scans; none means no policy scans. */
  readonly policies?: string;
  /** Evaluation pool: evaluations running at once, and waiting beyond that; more -> 429. */
  readonly pool: { readonly size: number; readonly queue: number };
  /**
   * Link to a build, the build ID appended: `buildUri` of the build-tool predicate. Absent: the
   * build page of the server the builds come from (`<server.publicUrl>/builds/`).
   */
  readonly buildUriBase?: string;
  /**
   * Read scope of principals restricted to projects: per project, the repository prefixes whose
   * attestations they may read and evaluate. Principals without a project restriction read all.
   */
  readonly repositoryAccess: Readonly<Record<string, readonly string[]>>;
}

export class ProvenanceConfigError extends Error {
  override readonly name = 'ProvenanceConfigError';
}

type Obj = Record<string, unknown>;

function obj(v: unknown, where: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new ProvenanceConfigError(`${where} must be a mapping`);
  return v as Obj;
}

function known(o: Obj, keys: readonly string[], where: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new ProvenanceConfigError(`${where}: unknown setting '${k}' (known: ${keys.join(', ')})`);
}

function str(o: Obj, k: string, where: string): string | undefined {
  const v = o[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new ProvenanceConfigError(`${where}.${k} must be a non-empty string`);
  return v;
}

function int(o: Obj, k: string, where: string, min: number, max: number): number | undefined {
  const v = o[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ProvenanceConfigError(`${where}.${k} must be an integer from ${min} to ${max}`);
  }
  return v;
}

function strList(o: Obj, k: string, where: string): string[] {
  const v = o[k];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) throw new ProvenanceConfigError(`${where}.${k} must be a list of strings`);
  return v as string[];
}

export const DEFAULT_POOL = { size: 16, queue: 256 } as const;

/**
 * @param section the `provenance` section as read from YAML
 * @param dataDirectory the server's data directory (keys and the default object store live below it)
 * @param base directory relative paths are resolved against
 */
export function parseProvenanceConfig(section: unknown, dataDirectory: string, base = process.cwd()): ProvenanceConfig {
  const where = 'provenance';
  const p = obj(section, where);
  known(p, ['keys', 'stores', 'policies', 'pool', 'buildUriBase', 'repositoryAccess'], where);
  const path = (s: string) => (isAbsolute(s) ? s : resolve(base, s));

  const k = obj(p['keys'], `${where}.keys`);
  known(k, ['algorithm', 'directory', 'files', 'active', 'trusted'], `${where}.keys`);
  const algorithm = (str(k, 'algorithm', `${where}.keys`) ?? 'ed25519') as KeyAlgorithm;
  if (!KEY_ALGORITHMS.includes(algorithm)) throw new ProvenanceConfigError(`${where}.keys.algorithm must be one of ${KEY_ALGORITHMS.join(', ')}`);
  const active = str(k, 'active', `${where}.keys`);
  const keys: KeyConfig = {
    algorithm,
    directory: path(str(k, 'directory', `${where}.keys`) ?? join(dataDirectory, 'provenance', 'keys')),
    files: strList(k, 'files', `${where}.keys`).map(path),
    ...(active !== undefined ? { active } : {}),
    trusted: strList(k, 'trusted', `${where}.keys`).map(path),
  };

  const rawStores = p['stores'] ?? [{ id: 'obj:default' }];
  if (!Array.isArray(rawStores) || rawStores.length === 0) throw new ProvenanceConfigError(`${where}.stores must be a non-empty list`);
  const stores: StoreConfig[] = rawStores.map((raw, i) => {
    const w = `${where}.stores[${i}]`;
    const s = obj(raw, w);
    const id = str(s, 'id', w);
    const m = id === undefined ? null : INSTANCE.exec(id);
    if (!m) throw new ProvenanceConfigError(`${w}.id must be obj:<name> or repo:<name> (name: letters, digits, . _ -)`);
    const type = m[1] as 'obj' | 'repo';
    const name = m[2]!;
    if (type === 'obj') {
      known(s, ['id', 'directory'], w);
      return { type, instance: id!, name, directory: path(str(s, 'directory', w) ?? join(dataDirectory, 'attestations', name)) };
    }
    known(s, ['id', 'url', 'username', 'password', 'token', 'listCacheMs', 'timeoutMs'], w);
    const url = str(s, 'url', w);
    if (url === undefined || !/^https?:\/\//.test(url)) throw new ProvenanceConfigError(`${w}.url must be an http(s) URL`);
    const username = str(s, 'username', w);
    const password = str(s, 'password', w);
    const token = str(s, 'token', w);
    return {
      type,
      instance: id!,
      name,
      url,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(token !== undefined ? { token } : {}),
      listCacheMs: int(s, 'listCacheMs', w, 0, 3_600_000) ?? 1000,
      timeoutMs: int(s, 'timeoutMs', w, 100, 600_000) ?? 10_000,
    };
  });
  const seen = new Set<string>();
  for (const s of stores) {
    if (seen.has(s.instance)) throw new ProvenanceConfigError(`${where}.stores: ${s.instance} is configured twice`);
    seen.add(s.instance);
  }

  const pool = obj(p['pool'], `${where}.pool`);
  known(pool, ['size', 'queue'], `${where}.pool`);

  const access = obj(p['repositoryAccess'], `${where}.repositoryAccess`);
  const repositoryAccess: Record<string, string[]> = {};
  for (const project of Object.keys(access)) repositoryAccess[project] = strList(access, project, `${where}.repositoryAccess`);

  const policies = str(p, 'policies', where);
  const buildUriBase = str(p, 'buildUriBase', where);
  return {
    keys,
    stores,
    ...(policies !== undefined ? { policies: path(policies) } : {}),
    pool: { size: int(pool, 'size', `${where}.pool`, 1, 10_000) ?? DEFAULT_POOL.size, queue: int(pool, 'queue', `${where}.pool`, 0, 1_000_000) ?? DEFAULT_POOL.queue },
    ...(buildUriBase !== undefined ? { buildUriBase } : {}),
    repositoryAccess,
  };
}
