// The `provenance` section of the server configuration: its JSON Schema (names, ranges, defaults)
// is the one place each setting is made; its descriptor in src/config/sections.ts puts it into the
// schema of the whole file. What a schema cannot say (a store configured twice; paths relative to
// the working directory and defaults below the data directory) is done here after the schema check.

import { isAbsolute, join, resolve } from 'node:path';
import { checkSection, compileSchema, faultAt, throwFaults, within, type Fault } from '../config/schema-check.js';
import { readSecretFile, secretFileSetting, secretPairFaults } from '../config/secret-file.js';
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

export const DEFAULT_POOL = { size: 16, queue: 256 } as const;
/** Defaults of a `repo:` store (in the schema's descriptions: ajv fills no defaults inside if/then). */
const REPO_DEFAULTS = { listCacheMs: 1000, timeoutMs: 10_000 } as const;

const text = { type: 'string', minLength: 1 } as const;
const paths = { type: 'array', items: text, default: [] } as const;

export const provenanceSchema = {
  description: 'The provenance service: signing keys, attestation stores, policies.',
  type: 'object',
  additionalProperties: false,
  properties: {
    keys: {
      description: 'Signing and verification keys.',
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        algorithm: { description: 'Algorithm of generated keys.', type: 'string', enum: [...KEY_ALGORITHMS], default: 'ed25519' },
        directory: { ...text, description: 'Directory of own keys (default: <data>/provenance/keys).' },
        files: { ...paths, description: 'Further private key files (PEM).' },
        active: { ...text, description: 'keyid of the key that signs (default: the newest).' },
        trusted: { ...paths, description: 'Public keys (PEM) trusted for verification only.' },
      },
    },
    stores: {
      description: 'Attestation stores, obj:<name> (a directory) or repo:<name> (an HTTP repository).',
      type: 'array',
      minItems: 1,
      default: [{ id: 'obj:default' }],
      items: {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'string', pattern: INSTANCE.source } },
        // if/then rather than oneOf: a fault is reported against the one kind that applies.
        allOf: [
          {
            if: { required: ['id'], properties: { id: { type: 'string', pattern: '^obj:' } } },
            then: { additionalProperties: false, properties: { id: true, directory: { ...text, description: 'Default: <data>/attestations/<name>.' } } },
          },
          {
            if: { required: ['id'], properties: { id: { type: 'string', pattern: '^repo:' } } },
            then: {
              additionalProperties: false,
              required: ['url'],
              properties: {
                id: true,
                url: { type: 'string', pattern: '^https?://' },
                username: text,
                password: text,
                passwordFile: secretFileSetting("the repository user's password"),
                token: text,
                tokenFile: secretFileSetting('the bearer token'),
                listCacheMs: { description: `How long a folder listing is reused, in ms (default ${REPO_DEFAULTS.listCacheMs}).`, type: 'integer', minimum: 0, maximum: 3_600_000 },
                timeoutMs: { description: `Time limit of a request, in ms (default ${REPO_DEFAULTS.timeoutMs}).`, type: 'integer', minimum: 100, maximum: 600_000 },
              },
            },
          },
        ],
      },
    },
    policies: { ...text, description: 'YAML file of policies and policy scans.' },
    pool: {
      description: 'Evaluation pool.',
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        size: { description: 'Evaluations running at once.', type: 'integer', minimum: 1, maximum: 10_000, default: DEFAULT_POOL.size },
        queue: { description: 'Evaluations waiting beyond that; more are answered 429.', type: 'integer', minimum: 0, maximum: 1_000_000, default: DEFAULT_POOL.queue },
      },
    },
    buildUriBase: { ...text, description: 'Link to a build, the build ID appended.' },
    repositoryAccess: {
      description: 'Per project, the repository prefixes its principals may read.',
      type: 'object',
      default: {},
      additionalProperties: { type: ['array', 'null'], items: text },
    },
  },
} as const;

/** Entries of `repositoryAccess` are project names: `app:` with no value is an empty list. */
export const PROVENANCE_KEEP_NULLS: ReadonlySet<string> = new Set(['repositoryAccess']);

export const provenanceWording = {
  pattern: (segments: readonly (string | number)[]) =>
    segments[segments.length - 1] === 'id'
      ? 'must be obj:<name> or repo:<name> (name: letters, digits, . _ -)'
      : segments[segments.length - 1] === 'url'
        ? 'must be an http(s) URL'
        : undefined,
};

interface Checked {
  keys: { algorithm: KeyAlgorithm; directory?: string; files: string[]; active?: string; trusted: string[] };
  stores: ({ id: string; directory?: string } & Partial<Omit<RepositoryStoreOptions, 'listCacheMs' | 'timeoutMs'>> & { listCacheMs?: number; timeoutMs?: number; passwordFile?: string; tokenFile?: string })[];
  policies?: string;
  pool: { size: number; queue: number };
  buildUriBase?: string;
  repositoryAccess: Record<string, string[] | null>;
}

export const provenanceValidator = compileSchema(provenanceSchema);

/** What the schema cannot say, at paths relative to the section. */
export function provenanceFaults(checked: { readonly stores?: readonly Readonly<Record<string, unknown>>[] }): Fault[] {
  const faults: Fault[] = [];
  const seen = new Set<unknown>();
  (checked.stores ?? []).forEach((s, i) => {
    if (seen.has(s['id'])) faults.push(faultAt(['stores', i, 'id'], `${String(s['id'])} is configured twice`));
    seen.add(s['id']);
    faults.push(...secretPairFaults(s, 'password', ['stores', i], false), ...secretPairFaults(s, 'token', ['stores', i], false));
  });
  return faults;
}

/**
 * @param section the `provenance` section as read from YAML
 * @param dataDirectory the server's data directory (keys and the default object store live below it)
 * @param base directory relative paths are resolved against
 */
export function parseProvenanceConfig(section: unknown, dataDirectory: string, base = process.cwd()): ProvenanceConfig {
  const p = checkSection<Checked>(provenanceValidator, section, ['provenance'], provenanceWording, PROVENANCE_KEEP_NULLS);
  throwFaults(within(['provenance'], provenanceFaults(p)));
  const path = (s: string) => (isAbsolute(s) ? s : resolve(base, s));
  const k = p.keys;
  const keys: KeyConfig = {
    algorithm: k.algorithm,
    directory: path(k.directory ?? join(dataDirectory, 'provenance', 'keys')),
    files: k.files.map(path),
    ...(k.active !== undefined ? { active: k.active } : {}),
    trusted: k.trusted.map(path),
  };
  const secret = (inline: string | undefined, file: string | undefined, at: (string | number)[]) => (file !== undefined ? readSecretFile(path(file), ['provenance', ...at]) : inline);
  const stores: StoreConfig[] = p.stores.map((s, i) => {
    const m = INSTANCE.exec(s.id)!;
    const name = m[2]!;
    if (m[1] === 'obj') return { type: 'obj', instance: s.id, name, directory: path(s.directory ?? join(dataDirectory, 'attestations', name)) };
    const password = secret(s.password, s.passwordFile, ['stores', i, 'passwordFile']);
    const token = secret(s.token, s.tokenFile, ['stores', i, 'tokenFile']);
    return {
      type: 'repo',
      instance: s.id,
      name,
      url: s.url!,
      ...(s.username !== undefined ? { username: s.username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(token !== undefined ? { token } : {}),
      listCacheMs: s.listCacheMs ?? REPO_DEFAULTS.listCacheMs,
      timeoutMs: s.timeoutMs ?? REPO_DEFAULTS.timeoutMs,
    };
  });
  const repositoryAccess: Record<string, string[]> = {};
  for (const [project, prefixes] of Object.entries(p.repositoryAccess)) repositoryAccess[project] = prefixes ?? [];
  return {
    keys,
    stores,
    ...(p.policies !== undefined ? { policies: path(p.policies) } : {}),
    pool: p.pool,
    ...(p.buildUriBase !== undefined ? { buildUriBase: p.buildUriBase } : {}),
    repositoryAccess,
  };
}
