// Loading the cache node configuration file (JSON or YAML): parse, validate against the version 4
// schema with ajv, turn every fault into a message a person can act on, then resolve defaults.

import { readFile } from 'node:fs/promises';
import { dotted, locateFaults, parseSource } from '../config/schema-check.js';
import { formatFaults, schemaFaults, type Fault } from './faults.js';
import { parseHashedSecret, type ParsedHashedSecret } from './secret.js';

export type { Fault } from './faults.js';

export type AccessLevel = 'none' | 'read' | 'readwrite';

export interface CacheUser {
  readonly name: string;
  readonly level: 'read' | 'readwrite';
  readonly password: ParsedHashedSecret;
  readonly note: string | null;
}

export type TargetSize = { readonly type: 'fixed'; readonly sizeMiB: number } | { readonly type: 'maxAvailable' };

export type UiAccess =
  | { readonly type: 'disabled' }
  | { readonly type: 'open' }
  | { readonly type: 'secure'; readonly username: string; readonly password: ParsedHashedSecret }
  | { readonly type: 'generated' };

export interface Registration {
  readonly key: string;
  readonly secret: string;
  readonly nodeAddress: string;
  readonly serverAddress: string;
}

/** The configuration with every default applied. */
export interface NodeConfig {
  readonly anonymousLevel: AccessLevel;
  readonly users: ReadonlyMap<string, CacheUser>;
  readonly freeSpaceBufferMiB: number;
  readonly maxArtifactMiB: number;
  readonly maxEntryAgeHours: number | null;
  readonly targetSize: TargetSize;
  readonly registration: Registration | null;
  readonly uiAccess: UiAccess;
}

/** Defaults for omitted settings (documented in docs/cache-node.md). Safe: nobody anonymous. */
export const DEFAULTS = {
  anonymousLevel: 'none',
  freeSpaceBufferSize: 1024,
  maxArtifactSize: 100,
  maxEntryAgeInHours: null,
  targetSize: { type: 'maxAvailable' },
  registration: null,
  uiAccess: { type: 'generated' },
} as const;

export type ConfigResult =
  | { readonly ok: true; readonly config: NodeConfig }
  | { readonly ok: false; readonly faults: readonly Fault[] };

/** Parses and validates the text of a configuration file (JSON or YAML; YAML 1.2 reads JSON). */
export function parseConfigText(text: string): ConfigResult {
  const parsed = parseSource(text);
  if (!parsed.ok) return parsed;
  const { value } = parsed.source;
  const faults = locateFaults([...schemaFaults(value), ...semanticFaults(value)], parsed.source);
  if (faults.length > 0) return { ok: false, faults };
  return { ok: true, config: resolve(value as FileV4) };
}

export async function loadConfigFile(file: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { ok: false, faults: [{ path: '(file)', message: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }] };
  }
  return parseConfigText(text);
}

export { dotted, formatFaults };

// ---- the file as the schema guarantees it -------------------------------------------------------

interface FileUser {
  level: 'read' | 'readwrite';
  password: string;
  note?: string | null;
}

interface FileV4 {
  version: 4;
  cache?: {
    accessControl?: { anonymousLevel?: AccessLevel; users?: Record<string, FileUser> };
    freeSpaceBufferSize?: number;
    maxArtifactSize?: number;
    maxEntryAgeInHours?: number | null;
    targetSize?: { type: 'fixed'; size: number } | { type: 'maxAvailable' };
  };
  registration?: Registration | null;
  uiAccess?: { type: 'disabled' | 'open' | 'generated' } | { type: 'secure'; username: string; password: string };
}

/** Checks the schema cannot express: hashes this node can verify, usernames Basic auth can carry. */
function semanticFaults(value: unknown): Fault[] {
  if (schemaFaults(value).length > 0) return [];
  const file = value as FileV4;
  const faults: Fault[] = [];
  const checkHash = (segments: string[], hash: string) => {
    const r = parseHashedSecret(hash);
    if (!r.ok) faults.push({ path: dotted(segments), segments, message: `${r.reason}; create the value with \`buildscope cache-node hash-secret\`` });
  };
  for (const [name, user] of Object.entries(file.cache?.accessControl?.users ?? {})) {
    if (name.includes(':') || name === '') {
      faults.push({ path: dotted(['cache', 'accessControl', 'users', name]), segments: ['cache', 'accessControl', 'users', name], message: 'a username must be non-empty and cannot contain ":" (HTTP Basic separates username and password with it)' });
    }
    checkHash(['cache', 'accessControl', 'users', name, 'password'], user.password);
  }
  const ui = file.uiAccess;
  if (ui?.type === 'secure') checkHash(['uiAccess', 'password'], ui.password);
  const reg = file.registration;
  if (reg) {
    for (const field of ['nodeAddress', 'serverAddress'] as const) {
      const scheme = reg[field].split(':')[0]?.toLowerCase();
      if (scheme !== 'http' && scheme !== 'https') {
        faults.push({ path: `registration.${field}`, segments: ['registration', field], message: `must be an http:// or https:// address, found "${reg[field]}"` });
      }
    }
  }
  return faults;
}

function resolve(file: FileV4): NodeConfig {
  const cache = file.cache ?? {};
  const users = new Map<string, CacheUser>();
  for (const [name, u] of Object.entries(cache.accessControl?.users ?? {})) {
    const parsed = parseHashedSecret(u.password);
    if (!parsed.ok) throw new Error('unreachable: hashes are checked before resolving');
    users.set(name, { name, level: u.level, password: parsed.value, note: u.note ?? null });
  }
  const ts = cache.targetSize ?? DEFAULTS.targetSize;
  const ui = file.uiAccess ?? DEFAULTS.uiAccess;
  let uiAccess: UiAccess;
  switch (ui.type) {
    case 'secure': {
      const parsed = parseHashedSecret(ui.password);
      if (!parsed.ok) throw new Error('unreachable: hashes are checked before resolving');
      uiAccess = { type: 'secure', username: ui.username, password: parsed.value };
      break;
    }
    case 'disabled':
    case 'open':
    case 'generated':
      uiAccess = { type: ui.type };
      break;
  }
  return {
    anonymousLevel: cache.accessControl?.anonymousLevel ?? DEFAULTS.anonymousLevel,
    users,
    freeSpaceBufferMiB: cache.freeSpaceBufferSize ?? DEFAULTS.freeSpaceBufferSize,
    maxArtifactMiB: cache.maxArtifactSize ?? DEFAULTS.maxArtifactSize,
    maxEntryAgeHours: cache.maxEntryAgeInHours ?? DEFAULTS.maxEntryAgeInHours,
    targetSize: ts.type === 'fixed' ? { type: 'fixed', sizeMiB: ts.size } : { type: 'maxAvailable' },
    registration: file.registration ?? DEFAULTS.registration,
    uiAccess,
  };
}
