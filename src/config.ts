// The server's configuration: one YAML file for everything an operator sets, overridable from the
// command line. The server reads only its own sections; each face (`export`, `provenance`,
// `cacheNodes`, `playground`) receives its section untouched as `unknown` and applies its own
// defaults and checks, so adding a face never changes this file.

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_DATA_DIR, isPostgresUrl } from './db/database.js';

export interface ServerSection {
  /**
   * The public name of this server. Access tokens are issued for it (`iss`/`aud`), so changing it
   * invalidates every token issued before.
   */
  readonly hostname: string;
  /** Listen address. */
  readonly host: string;
  readonly port: number;
  /**
   * Server processes sharing the port (node:cluster), 1 to 64; default 1. More than one lets a
   * busy server use several cores; every process serves the same database.
   */
  readonly workers: number;
  /**
   * The address people and tools reach this server at (`https://scans.example.com`, no trailing
   * slash): the base of the links the server writes (attestations' `buildUri`, `/s/<id>`).
   * Absent: the listen address (see `publicUrlOf`).
   */
  readonly publicUrl?: string;
}

export interface DatabaseSection {
  /** Data directory of the embedded SQLite database (used when `url` is absent). */
  readonly data?: string;
  /** postgres:// URL; several server processes may share one PostgreSQL database. */
  readonly url?: string;
}

/** Where the secret that signs access tokens lives. */
export type SigningKeys =
  /** In the shared database (default): every server process over that database uses the same key. */
  | { readonly kind: 'database' }
  /** In a file in this directory (created with a fresh key when missing). */
  | { readonly kind: 'directory'; readonly path: string };

export interface AuthSection {
  readonly signingKeys: SigningKeys;
}

export interface Limits {
  /** Builds per `GET /api/builds` response when `maxBuilds` is not given. */
  readonly maxBuildsDefault: number;
  /** Largest accepted `maxBuilds` (at most 1000). */
  readonly maxBuildsMax: number;
  /** Long-poll wait of `GET /api/builds` when `maxWaitSecs` is not given. */
  readonly maxWaitSecsDefault: number;
  /** Largest accepted `maxWaitSecs` (at most 20). */
  readonly maxWaitSecsMax: number;
  /** Default access token lifetime, capped by the authenticating credential's remaining life. */
  readonly tokenDefaultHours: number;
  /** Largest accepted `expiresInHours` (at most 24). */
  readonly tokenMaxHours: number;
  /** Lifetime of a new access key when none is given. */
  readonly accessKeyDefaultDays: number;
  /** Largest request body other than build ingest, in bytes. */
  readonly requestBodyBytes: number;
  /** Largest NDJSON ingest body of `POST /api/builds`, in bytes. */
  readonly ingestBodyBytes: number;
  /** Time limit of one search statement (PostgreSQL statement_timeout; SQLite search threads), in ms. */
  readonly searchTimeoutMs: number;
}

/** The Build Event Service (gRPC) endpoint for Bazel's `--bes_backend`, on its own port. */
export interface BesSection {
  /** Listen port (0 picks a free one), or null when the endpoint is off (the default of `serve`). */
  readonly port: number | null;
  /** Largest accepted gRPC message in bytes (default 64 MiB; gRPC's own default of 4 MiB is too small for Bazel). */
  readonly maxMessageBytes: number;
}

export const DEFAULT_BES_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface ServerConfig {
  readonly server: ServerSection;
  readonly bes: BesSection;
  readonly database: DatabaseSection;
  readonly auth: AuthSection;
  readonly limits: Limits;
  /** Face sections, parsed by each face itself. */
  readonly export: unknown;
  readonly provenance: unknown;
  readonly cacheNodes: unknown;
  readonly playground: unknown;
  /** Retention (deleting old builds, watching free disk space), parsed by src/retention/config.ts. */
  readonly retention: unknown;
}

export const DEFAULT_LIMITS: Limits = {
  maxBuildsDefault: 100,
  maxBuildsMax: 1000,
  maxWaitSecsDefault: 3,
  maxWaitSecsMax: 20,
  tokenDefaultHours: 2,
  tokenMaxHours: 24,
  accessKeyDefaultDays: 365,
  requestBodyBytes: 1024 * 1024,
  ingestBodyBytes: 256 * 1024 * 1024,
  searchTimeoutMs: 10_000,
};

/** Upper bounds the API itself promises; an operator may lower a limit but never raise it past these. */
const LIMIT_BOUNDS: Readonly<Record<keyof Limits, readonly [number, number]>> = {
  maxBuildsDefault: [0, 1000],
  maxBuildsMax: [0, 1000],
  maxWaitSecsDefault: [1, 20],
  maxWaitSecsMax: [1, 20],
  tokenDefaultHours: [1, 24],
  tokenMaxHours: [1, 24],
  accessKeyDefaultDays: [1, 36500],
  requestBodyBytes: [1024, 1024 ** 3],
  ingestBodyBytes: [1024, 64 * 1024 ** 3],
  searchTimeoutMs: [1, 600_000],
};

export const DEFAULT_PORT = 5080;
export const DEFAULT_HOST = '127.0.0.1';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Command-line settings, which win over the file. */
export interface ConfigOverrides {
  readonly host?: string;
  readonly port?: number;
  readonly hostname?: string;
  readonly data?: string;
  readonly url?: string;
  readonly workers?: number;
  /** Port of the Build Event Service endpoint (turns it on). */
  readonly besPort?: number;
}

/** Reads and checks a YAML configuration file (when given), then applies the overrides. */
export function loadConfig(file?: string, overrides: ConfigOverrides = {}): ServerConfig {
  let raw: unknown = {};
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`Cannot read the configuration file ${file}: ${(e as Error).message}`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`${file} is not valid YAML: ${(e as Error).message}`);
    }
  }
  return parseConfig(raw, overrides, file ?? 'configuration');
}

/** Checks a configuration object (as read from YAML) and fills in the defaults. */
export function parseConfig(raw: unknown, overrides: ConfigOverrides = {}, where = 'configuration'): ServerConfig {
  const top = asObject(raw, where);
  const known = ['server', 'bes', 'database', 'auth', 'limits', 'export', 'provenance', 'cacheNodes', 'playground', 'retention'];
  for (const k of Object.keys(top)) {
    if (!known.includes(k)) throw new ConfigError(`${where}: unknown section '${k}' (known: ${known.join(', ')})`);
  }

  const s = asObject(top['server'] ?? {}, 'server');
  noUnknown(s, ['hostname', 'host', 'port', 'workers', 'publicUrl'], 'server');
  const host = overrides.host ?? optString(s, 'host', 'server') ?? DEFAULT_HOST;
  const port = overrides.port ?? optInt(s, 'port', 'server', 0, 65535) ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`server.port: ${port} is not a port number`);
  const workers = overrides.workers ?? optInt(s, 'workers', 'server', 1, 64) ?? 1;
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new ConfigError(`server.workers: ${workers} is not a number of processes from 1 to 64`);
  const hostname = overrides.hostname ?? optString(s, 'hostname', 'server') ?? 'localhost';
  if (hostname.trim() === '') throw new ConfigError('server.hostname must not be empty');
  const publicUrl = parsePublicUrl(optString(s, 'publicUrl', 'server'));

  const b = asObject(top['bes'] ?? {}, 'bes');
  noUnknown(b, ['port', 'maxMessageBytes'], 'bes');
  const besPort = overrides.besPort ?? optInt(b, 'port', 'bes', 0, 65535) ?? null;
  if (besPort !== null && (!Number.isInteger(besPort) || besPort < 0 || besPort > 65535)) throw new ConfigError(`bes.port: ${besPort} is not a port number`);
  const bes: BesSection = { port: besPort, maxMessageBytes: optInt(b, 'maxMessageBytes', 'bes', 4 * 1024 * 1024, 2 ** 31 - 1) ?? DEFAULT_BES_MAX_MESSAGE_BYTES };

  const d = asObject(top['database'] ?? {}, 'database');
  noUnknown(d, ['data', 'url'], 'database');
  let data = optString(d, 'data', 'database');
  let url = optString(d, 'url', 'database');
  if (overrides.url !== undefined) {
    url = overrides.url;
    data = undefined;
  } else if (overrides.data !== undefined) {
    data = overrides.data;
    url = undefined;
  }
  if (url !== undefined && data !== undefined) throw new ConfigError('database: give either data or url, not both');
  if (url !== undefined && !isPostgresUrl(url)) throw new ConfigError(`database.url: not a postgres:// URL: ${url}`);
  const database: DatabaseSection = url !== undefined ? { url } : { data: data ?? DEFAULT_DATA_DIR };

  const a = asObject(top['auth'] ?? {}, 'auth');
  noUnknown(a, ['signingKeys'], 'auth');
  const sk = optString(a, 'signingKeys', 'auth') ?? 'database';
  const signingKeys: SigningKeys = sk === 'database' ? { kind: 'database' } : { kind: 'directory', path: sk };

  const l = asObject(top['limits'] ?? {}, 'limits');
  noUnknown(l, Object.keys(DEFAULT_LIMITS), 'limits');
  const limits = { ...DEFAULT_LIMITS } as Record<keyof Limits, number>;
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const [min, max] = LIMIT_BOUNDS[key];
    const v = optInt(l, key, 'limits', min, max);
    if (v !== undefined) limits[key] = v;
  }
  if (limits.maxBuildsDefault > limits.maxBuildsMax) throw new ConfigError('limits.maxBuildsDefault exceeds limits.maxBuildsMax');
  if (limits.maxWaitSecsDefault > limits.maxWaitSecsMax) throw new ConfigError('limits.maxWaitSecsDefault exceeds limits.maxWaitSecsMax');
  if (limits.tokenDefaultHours > limits.tokenMaxHours) throw new ConfigError('limits.tokenDefaultHours exceeds limits.tokenMaxHours');

  return {
    server: { hostname, host, port, workers, ...(publicUrl !== undefined ? { publicUrl } : {}) },
    bes,
    database,
    auth: { signingKeys },
    limits,
    export: top['export'],
    provenance: top['provenance'],
    cacheNodes: top['cacheNodes'],
    playground: top['playground'],
    retention: top['retention'],
  };
}

/** `server.publicUrl`: an absolute http(s) URL without query or fragment; kept without a trailing slash. */
function parsePublicUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`server.publicUrl: not an absolute URL: ${JSON.stringify(text)} (expected e.g. https://scans.example.com)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError(`server.publicUrl: expected an http:// or https:// address without credentials, query or fragment, got ${JSON.stringify(text)}`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * The public address of a server: `server.publicUrl` when set, else the address it listens on
 * (`server.hostname` in place of a wildcard listen address such as 0.0.0.0, which no client can use).
 */
export function publicUrlOf(server: ServerSection, listening: { address: string; port: number } | string | null): string {
  if (server.publicUrl !== undefined) return server.publicUrl;
  const port = listening !== null && typeof listening === 'object' ? listening.port : server.port;
  let host = listening !== null && typeof listening === 'object' ? listening.address : server.host;
  if (host === '0.0.0.0' || host === '::' || host === '') host = server.hostname;
  if (host.includes(':')) host = `[${host}]`;
  return `http://${host}:${port}`;
}

/** The configuration with every default: what a server started without a file uses. */
export function defaultConfig(overrides: ConfigOverrides = {}): ServerConfig {
  return parseConfig({}, overrides);
}

function asObject(v: unknown, where: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(`${where} must be a mapping`);
  return v as Record<string, unknown>;
}

function noUnknown(o: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) throw new ConfigError(`${where}: unknown setting '${k}' (known: ${known.join(', ')})`);
  }
}

function optString(o: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ConfigError(`${where}.${key} must be a string`);
  return v;
}

function optInt(o: Record<string, unknown>, key: string, where: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ConfigError(`${where}.${key} must be an integer`);
  if (v < min || v > max) throw new ConfigError(`${where}.${key} must be between ${min} and ${max}, got ${v}`);
  return v;
}

/** Options every server-side command accepts. */
export interface CliDatabaseOptions {
  readonly config?: string;
  readonly data?: string;
  readonly db?: string;
  readonly host?: string;
  readonly port?: string;
  readonly hostname?: string;
  readonly workers?: string;
  readonly besPort?: string;
}

/** The configuration a command runs with: the file (if any) with the command-line options on top. */
export function configFromCli(o: CliDatabaseOptions): ServerConfig {
  if (o.data !== undefined && o.db !== undefined) throw new ConfigError('Give either --data or --db, not both');
  let port: number | undefined;
  if (o.port !== undefined) {
    port = Number(o.port);
    if (!/^\d+$/.test(o.port) || port > 65535) throw new ConfigError(`--port: not a port number: ${o.port}`);
  }
  let besPort: number | undefined;
  if (o.besPort !== undefined) {
    besPort = Number(o.besPort);
    if (!/^\d+$/.test(o.besPort) || besPort > 65535) throw new ConfigError(`--bes-port: not a port number: ${o.besPort}`);
  }
  return loadConfig(o.config, {
    ...(besPort !== undefined ? { besPort } : {}),
    ...(o.host !== undefined ? { host: o.host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(o.hostname !== undefined ? { hostname: o.hostname } : {}),
    ...(o.workers !== undefined ? { workers: /^\d+$/.test(o.workers) ? Number(o.workers) : Number.NaN } : {}),
    ...(o.data !== undefined ? { data: o.data } : {}),
    ...(o.db !== undefined ? { url: o.db } : {}),
  });
}
