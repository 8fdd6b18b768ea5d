// The server's configuration: one YAML file for everything an operator sets, overridable from the
// command line. The whole file has one JSON Schema (`serverConfigSchema`), made of one schema per
// section: the server's own sections are here, each face's section lives with the face
// (export/options.ts, provenance/config.ts, retention/config.ts, cache-registry/config.ts,
// config/playground.ts). A file is checked against all of it, with line and column for every
// fault, before anything else runs; src/config/schema-check.ts does the checking and wording.

import { readFileSync } from 'node:fs';
import { DEFAULT_DATA_DIR, isPostgresUrl } from './db/database.js';
import {
  ConfigError,
  compileSchema,
  defaultsOf,
  faultAt,
  locateFaults,
  parseSource,
  schemaFaults,
  throwFaults,
  withoutNulls,
  within,
  type Agrees,
  type Fault,
  type Validator,
  type Wording,
} from './config/schema-check.js';
import { exportSchema, exportValidator, exportWording, parseExportOptions, type ExportOptions } from './export/options.js';
import { parseProvenanceConfig, PROVENANCE_KEEP_NULLS, provenanceFaults, provenanceSchema, provenanceValidator, provenanceWording, type ProvenanceConfig } from './provenance/config.js';
import { parseRetentionConfig, retentionFaults, retentionSchema, retentionValidator, type RetentionConfig } from './retention/config.js';
import { cacheNodesSchema, cacheNodesValidator, parseCacheNodesSection, type CacheNodesSettings } from './cache-registry/config.js';
import { parsePlaygroundSection, playgroundSchema, playgroundValidator, playgroundWording, type PlaygroundSection } from './config/playground.js';
import { DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from './auth/sign-in-limits.js';

export { ConfigError };

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
  /**
   * Seconds a shutdown (SIGTERM, SIGINT) may take, default 30. Waiting long-polls and export
   * streams end at once; requests still running after this are cut off and the process exits with
   * status 1, and the primary of several server processes kills those that have not stopped.
   * Below the service manager's own limit (systemd's TimeoutStopSec, 90 s by default).
   */
  readonly stopTimeoutSeconds: number;
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
  /** Failed password tries taken per user name and client (src/auth/sign-in-limits.ts). */
  readonly signInLimits: SignInLimits;
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
  /** Time limit of one search: a listing, count, facets, trends or value completion, all its statements together (PostgreSQL statement_timeout; SQLite search threads), in ms. */
  readonly searchTimeoutMs: number;
  /** Console output (ConsoleOutput text) kept per build (per ingest line), in bytes; the rest is cut at ingest and the build page says so. */
  readonly consoleBytesPerBuild: number;
  /** SQLite: memory of the analytics index (counts and facets of any query from memory; about 40 bytes a build), in bytes; 0 turns it off. */
  readonly analyticsIndexBytes: number;
}

/** The Build Event Service (gRPC) endpoint for Bazel's `--bes_backend`, on its own port. */
export interface BesSection {
  /** Listen port (0 picks a free one), or null when the endpoint is off (the default of `serve`). */
  readonly port: number | null;
  /** Largest accepted gRPC message in bytes (default 16 MiB; gRPC's own default of 4 MiB is too small for Bazel). */
  readonly maxMessageBytes: number;
  /**
   * Largest first message of a stream whose caller is not yet known (no Authorization header: Bazel 4
   * sends its key as a keyword in the first message). Bazel's first message is a small BuildStarted.
   */
  readonly maxUnauthenticatedMessageBytes: number;
  /** What one unfinished invocation may keep on disk (its events reduced to what the build is made of). */
  readonly maxInvocationBytes: number;
  /** Unfinished invocations one user may have at a time. */
  readonly maxOpenInvocationsPerUser: number;
  /** Unfinished invocations the endpoint holds at a time, all users together. */
  readonly maxOpenInvocations: number;
  /** How long an invocation whose stream ended unfinished is kept for Bazel to resume it on a new stream. */
  readonly retryWindowSeconds: number;
  /**
   * The cache nodes whose `bytestream://` URIs the endpoint reads Bazel's test reports and logs
   * from (ByteStream.Read on their gRPC port); a URI naming any other host is never read.
   */
  readonly cacheNodes: readonly BesCacheNode[];
  /** Largest test report or log read from a cache node, in bytes (a larger one is left unread). */
  readonly testOutputMaxBytes: number;
  /** Test reports and logs read per invocation (a failed attempt's first). */
  readonly testOutputsPerInvocation: number;
  /** Time all reads of one invocation's test outputs may take together, in seconds. */
  readonly testOutputTimeoutSeconds: number;
}

/** A cache node the Build Event Service endpoint reads test outputs from. */
export interface BesCacheNode {
  /** `host:port` of the node's gRPC port, as Bazel's URIs name it (`bytestream://host:port/...`). */
  readonly address: string;
  /** A user of the node (level `read` is enough) and its password; absent: read anonymously. */
  readonly user?: string;
  readonly password?: string;
}

/**
 * 16 MiB: Bazel sends output in chunks of --bes_outerr_chunk_size (1 MiB by default), so its
 * events stay far below; a message being read costs twice its size in memory (grpc-js keeps its
 * parts and their concatenation), per stream.
 */
export const DEFAULT_BES_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface ServerConfig {
  readonly server: ServerSection;
  readonly bes: BesSection;
  readonly database: DatabaseSection;
  readonly auth: AuthSection;
  readonly limits: Limits;
  /**
   * Face sections as written (nulls removed). A file's are checked when it is read; `faceSettings`
   * turns them all into typed settings (each with its face's parse function, the same schema), which
   * `openServer` does once before it opens the database and hands to the faces (FacePluginOptions in
   * src/http/context.ts); no face parses its section itself.
   */
  readonly export: unknown;
  readonly provenance: unknown;
  readonly cacheNodes: unknown;
  readonly playground: unknown;
  /** Retention (deleting old builds, watching free disk space), parsed by src/retention/config.ts. */
  readonly retention: unknown;
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

export const DEFAULT_PORT = 5080;
export const DEFAULT_HOST = '127.0.0.1';
/** Seconds a shutdown may take (server.stopTimeoutSeconds; the cache node and the provenance service too). */
export const DEFAULT_STOP_TIMEOUT_SECONDS = 30;

// ---- the schema of the whole file ---------------------------------------------------------------

const portNumber = { type: 'integer', minimum: 0, maximum: 65_535 } as const;
const MiB = 1024 * 1024;

const serverSchema = {
  description: 'The HTTP server.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    hostname: { description: 'Public name of this server; access tokens are issued for it.', type: 'string', minLength: 1, pattern: '\\S', default: 'localhost' },
    host: { description: 'Listen address.', type: 'string', minLength: 1, default: DEFAULT_HOST },
    port: { ...portNumber, description: 'Listen port (0 picks a free one).', default: DEFAULT_PORT },
    workers: { description: 'Server processes sharing the port.', type: 'integer', minimum: 1, maximum: 64, default: 1 },
    publicUrl: { description: 'The address people and tools reach this server at (http:// or https://, no query).', type: 'string', minLength: 1 },
    stopTimeoutSeconds: { description: 'Seconds a shutdown may take before running requests are cut off and the process exits with status 1.', type: 'integer', minimum: 1, maximum: 3600, default: DEFAULT_STOP_TIMEOUT_SECONDS },
  },
} as const;

const besSchema = {
  description: 'The Build Event Service (gRPC) endpoint for Bazel, on its own port; off without a port.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    port: { ...portNumber, description: 'Listen port (0 picks a free one); absent: the endpoint is off.' },
    maxMessageBytes: { description: 'Largest accepted gRPC message in bytes.', type: 'integer', minimum: 4 * MiB, maximum: 2 ** 31 - 1, default: DEFAULT_BES_MAX_MESSAGE_BYTES },
    maxUnauthenticatedMessageBytes: {
      description: "Largest first message of a stream without an Authorization header (Bazel 4 sends its key as a keyword in it); larger ones are refused before they are read.",
      type: 'integer',
      minimum: 64 * 1024,
      maximum: 2 ** 31 - 1,
      default: MiB,
    },
    maxInvocationBytes: { description: 'Bytes one unfinished invocation may keep on disk (its events reduced to what the build is made of).', type: 'integer', minimum: MiB, maximum: 2 ** 40, default: 256 * MiB },
    maxOpenInvocationsPerUser: { description: 'Unfinished invocations one user may have at a time.', type: 'integer', minimum: 1, maximum: 100_000, default: 32 },
    maxOpenInvocations: { description: 'Unfinished invocations the endpoint holds at a time, all users together.', type: 'integer', minimum: 1, maximum: 1_000_000, default: 512 },
    retryWindowSeconds: { description: 'Seconds an invocation whose stream ended unfinished is kept for Bazel to resume it on a new stream.', type: 'integer', minimum: 1, maximum: 86_400, default: 600 },
    cacheNodes: {
      description:
        "The Buildscope cache nodes whose bytestream:// URIs (Bazel with --remote_cache=grpc://... and --bes_backend) the endpoint reads test reports and logs from, over gRPC; URIs naming any other host are never read.",
      type: 'array',
      maxItems: 64,
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['address'],
        dependentRequired: { user: ['password'], password: ['user'] },
        properties: {
          address: {
            description: "host:port of the node's --grpc-port as Bazel's URIs name it (the address of --remote_cache, or --remote_bytestream_uri_prefix); the endpoint connects to it.",
            type: 'string',
            pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$',
          },
          user: { description: 'A user of the node (level read is enough); absent: anonymous reads.', type: 'string', minLength: 1 },
          password: { description: "The user's password (keep this file readable by the server only).", type: 'string', minLength: 1 },
        },
      },
    },
    testOutputMaxBytes: { description: 'Largest test report or log read from a cache node, in bytes; a larger one is left unread.', type: 'integer', minimum: 1024, maximum: 64 * MiB, default: 8 * MiB },
    testOutputsPerInvocation: { description: "Test reports and logs read per invocation (failed attempts' first); the rest are left unread.", type: 'integer', minimum: 0, maximum: 1000, default: 16 },
    testOutputTimeoutSeconds: { description: "Seconds all reads of one invocation's test outputs may take together; what is not read by then is left unread.", type: 'integer', minimum: 1, maximum: 300, default: 10 },
  },
} as const;

const databaseSchema = {
  description: `The database: a data directory for the embedded SQLite database (default ${DEFAULT_DATA_DIR}) or a postgres:// URL, not both.`,
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    data: { description: 'Data directory of the embedded SQLite database.', type: 'string', minLength: 1 },
    url: { description: 'postgres:// URL; several server processes may share one PostgreSQL database.', type: 'string', minLength: 1 },
  },
} as const;

const signInLimitsSchema = {
  description: 'Failed password tries (sign-in and Basic credentials) taken per user name and client address before each further try waits, twice as long each time.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    userAndClient: { description: 'Failures of one user name from one address before its tries wait.', type: 'integer', minimum: 1, maximum: 1000, default: DEFAULT_SIGN_IN_LIMITS.userAndClient },
    client: { description: 'Failures from one address, all user names together, before its tries wait.', type: 'integer', minimum: 1, maximum: 100_000, default: DEFAULT_SIGN_IN_LIMITS.client },
    user: { description: 'Failures of one user name from all addresses before the addresses that failed on it lose their free tries (an address that has not failed on it keeps its try).', type: 'integer', minimum: 1, maximum: 1_000_000, default: DEFAULT_SIGN_IN_LIMITS.user },
    maxBackoffSeconds: { description: 'The longest wait between two tries, in seconds.', type: 'integer', minimum: 1, maximum: 86_400, default: DEFAULT_SIGN_IN_LIMITS.maxBackoffSeconds },
    forgetAfterSeconds: { description: 'Failures are forgotten this long after the last one, in seconds (at least maxBackoffSeconds).', type: 'integer', minimum: 1, maximum: 604_800, default: DEFAULT_SIGN_IN_LIMITS.forgetAfterSeconds },
  },
} as const;

const authSchema = {
  description: 'Authentication.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    signingKeys: { description: '"database" (shared by every process over the database) or a directory holding the key.', type: 'string', minLength: 1, default: 'database' },
    signInLimits: signInLimitsSchema,
  },
} as const;

/** Every bound is one the API itself promises: an operator may lower a limit, never raise it past them. */
const limitsSchema = {
  description: 'Limits of the REST API.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    maxBuildsDefault: { description: 'Builds per GET /api/builds response when maxBuilds is not given.', type: 'integer', minimum: 0, maximum: 1000, default: 100 },
    maxBuildsMax: { description: 'Largest accepted maxBuilds.', type: 'integer', minimum: 0, maximum: 1000, default: 1000 },
    maxWaitSecsDefault: { description: 'Long-poll wait when maxWaitSecs is not given.', type: 'integer', minimum: 1, maximum: 20, default: 3 },
    maxWaitSecsMax: { description: 'Largest accepted maxWaitSecs.', type: 'integer', minimum: 1, maximum: 20, default: 20 },
    tokenDefaultHours: { description: 'Default access token lifetime.', type: 'integer', minimum: 1, maximum: 24, default: 2 },
    tokenMaxHours: { description: 'Largest accepted expiresInHours.', type: 'integer', minimum: 1, maximum: 24, default: 24 },
    accessKeyDefaultDays: { description: 'Lifetime of a new access key when none is given.', type: 'integer', minimum: 1, maximum: 36_500, default: 365 },
    requestBodyBytes: { description: 'Largest request body other than build ingest, in bytes.', type: 'integer', minimum: 1024, maximum: 1024 ** 3, default: MiB },
    ingestBodyBytes: { description: 'Largest NDJSON ingest body, in bytes.', type: 'integer', minimum: 1024, maximum: 64 * 1024 ** 3, default: 256 * MiB },
    searchTimeoutMs: { description: 'Time limit of one search (listing, count, facets, trends, value completion; all its statements together), in ms.', type: 'integer', minimum: 1, maximum: 600_000, default: 10_000 },
    consoleBytesPerBuild: {
      description: 'Console output kept per build (per ingest line), in bytes: the rest is cut at ingest and the build page says so.',
      type: 'integer',
      minimum: 0,
      maximum: 1024 ** 3,
      default: 4 * MiB,
    },
    analyticsIndexBytes: {
      description:
        'SQLite: memory the analytics index may take, in bytes (counts, facets and trends of any query from memory, about 90 bytes a demo build, 256 MiB holds about 3 million builds); past it, and at 0, they are read from the database.',
      type: 'integer',
      minimum: 0,
      maximum: 64 * 1024 ** 3,
      default: 256 * MiB,
    },
  },
} as const;

// The explicit interfaces above carry the documentation and the resolved shapes; these lines stop
// the compile when a setting is added to a schema and not to its interface, or the other way round.
// (`auth` is left out, its `signInLimits` checked alone: its resolved `signingKeys` is a union, not the file's string; `bes.port`
// is null in the type where the file leaves it out.)
const agrees: [Agrees<typeof serverSchema, ServerSection>, Agrees<typeof besSchema, BesSection>, Agrees<typeof databaseSchema, DatabaseSection>, Agrees<typeof limitsSchema, Limits>, Agrees<typeof signInLimitsSchema, SignInLimits>] = [
  true,
  true,
  true,
  true,
  true,
];
void agrees;

/** The limits when none is set: the schema's defaults. */
export const DEFAULT_LIMITS = defaultsOf(limitsSchema) as unknown as Limits;

const SECTIONS = {
  server: serverSchema,
  bes: besSchema,
  database: databaseSchema,
  auth: authSchema,
  limits: limitsSchema,
  export: exportSchema,
  provenance: provenanceSchema,
  cacheNodes: cacheNodesSchema,
  playground: playgroundSchema,
  retention: retentionSchema,
} as const;

export const SERVER_SCHEMA_ID = 'https://buildscope.dev/schema/server-config.schema.json';

/**
 * The JSON Schema of the server's configuration file, committed as schema/server-config.schema.json.
 * At run time each section is checked by its own validator (below), so no schema is compiled twice.
 */
export const serverConfigSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: SERVER_SCHEMA_ID,
  title: 'Buildscope server configuration',
  description: 'A setting written without a value (null) means its default.',
  type: 'object',
  additionalProperties: false,
  properties: SECTIONS,
} as const;

/** Each face section's validator and wording, as the face's own parse function uses them. */
const FACES: Readonly<Record<'export' | 'provenance' | 'cacheNodes' | 'playground' | 'retention', { readonly validate: Validator; readonly wording?: Wording }>> = {
  export: { validate: exportValidator, wording: exportWording },
  provenance: { validate: provenanceValidator, wording: provenanceWording },
  cacheNodes: { validate: cacheNodesValidator },
  playground: { validate: playgroundValidator, wording: playgroundWording },
  retention: { validate: retentionValidator },
};

/** The top level and the server's own sections; a face section may be anything here (see parseConfig). */
const validateOwn = compileSchema({
  type: 'object',
  additionalProperties: false,
  properties: { ...SECTIONS, ...Object.fromEntries(Object.keys(FACES).map((f) => [f, true])) },
});

const ownWording: Wording = { pattern: (segments) => (segments[0] === 'server' ? 'must not be empty' : undefined) };

/** Names in the file whose entries are the operator's own names (a null entry is kept). */
const KEEP_NULLS = PROVENANCE_KEEP_NULLS;

interface CheckedFile {
  server: { hostname: string; host: string; port: number; workers: number; stopTimeoutSeconds: number; publicUrl?: string };
  bes: Omit<BesSection, 'port'> & { port?: number };
  database: { data?: string; url?: string };
  auth: { signingKeys: string; signInLimits: SignInLimits };
  limits: Limits;
  export?: unknown;
  provenance?: { stores?: { id?: unknown }[] };
  cacheNodes?: unknown;
  playground?: unknown;
  retention?: RetentionConfig;
}

/** What the schema cannot say about the server's own sections (paths from the top of the file). */
function ownFaults(c: CheckedFile): Fault[] {
  const faults: Fault[] = [];
  if (c.server.publicUrl !== undefined) {
    const problem = publicUrlProblem(c.server.publicUrl);
    if (problem !== undefined) faults.push(faultAt(['server', 'publicUrl'], problem));
  }
  if (c.database.data !== undefined && c.database.url !== undefined) faults.push(faultAt(['database'], 'give either data or url, not both'));
  if (c.database.url !== undefined && !isPostgresUrl(c.database.url)) faults.push(faultAt(['database', 'url'], `not a postgres:// URL: ${c.database.url}`));
  for (const [value, max] of [
    ['maxBuildsDefault', 'maxBuildsMax'],
    ['maxWaitSecsDefault', 'maxWaitSecsMax'],
    ['tokenDefaultHours', 'tokenMaxHours'],
  ] as const) {
    if (c.limits[value] > c.limits[max]) faults.push(faultAt(['limits', value], `is ${c.limits[value]}, which exceeds limits.${max} (${c.limits[max]})`));
  }
  // Failures forgotten before the longest wait ends would give a guesser her free tries back early.
  const signIn = c.auth.signInLimits;
  if (signIn.forgetAfterSeconds < signIn.maxBackoffSeconds) {
    faults.push(faultAt(['auth', 'signInLimits', 'forgetAfterSeconds'], `is ${signIn.forgetAfterSeconds}, below auth.signInLimits.maxBackoffSeconds (${signIn.maxBackoffSeconds})`));
  }
  return faults;
}

/** Faults of a whole file's value: the schema first, then (on a file the schema accepts) what it cannot say. */
export function configFaults(value: unknown): Fault[] {
  const checked = structuredClone(withoutNulls(value ?? {}, KEEP_NULLS));
  const faults = schemaFaults(validateOwn, checked, ownWording);
  if (checked === null || typeof checked !== 'object' || Array.isArray(checked)) return faults;
  for (const [name, face] of Object.entries(FACES)) {
    const section = (checked as Record<string, unknown>)[name];
    if (section !== undefined) faults.push(...within([name], schemaFaults(face.validate, section, face.wording)));
  }
  if (faults.length > 0) return faults;
  const c = checked as CheckedFile;
  return [...ownFaults(c), ...within(['provenance'], provenanceFaults(c.provenance ?? {})), ...within(['retention'], retentionFaults(c.retention ?? {}, c.database))];
}

/**
 * Reads and checks a YAML configuration file (when given), then applies the overrides. Every
 * section, the faces' included, is checked here, before anything else runs; each fault names its
 * line and column.
 */
export function loadConfig(file?: string, overrides: ConfigOverrides = {}): ServerConfig {
  if (file === undefined) return parseConfig({}, overrides);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`Cannot read the configuration file ${file}: ${(e as Error).message}`);
  }
  return configFromText(text, file, overrides);
}

/** The same, from the text of a file; `where` names it in messages. */
export function configFromText(text: string, where: string, overrides: ConfigOverrides = {}): ServerConfig {
  const parsed = parseSource(text);
  if (!parsed.ok) throw new ConfigError(parsed.faults, where);
  throwFaults(locateFaults(configFaults(parsed.source.value), parsed.source), where);
  return parseConfig(parsed.source.value, overrides, where);
}

/**
 * Checks a configuration object (as read from YAML) and fills in the defaults. The server's own
 * sections are checked here; a face section is handed on as given (nulls removed) and checked by
 * its face's parse function, which `startServer` calls for every face before it opens the
 * database. (loadConfig has checked the faces of a file already.)
 */
export function parseConfig(raw: unknown, overrides: ConfigOverrides = {}, where?: string): ServerConfig {
  const value = withoutNulls(raw ?? {}, KEEP_NULLS);
  const checked = structuredClone(value) as CheckedFile;
  throwFaults(schemaFaults(validateOwn, checked, ownWording), where);

  // Command-line settings win; they are checked by the same schema as the file's.
  const s = checked.server;
  if (overrides.host !== undefined) s.host = overrides.host;
  if (overrides.port !== undefined) s.port = overrides.port;
  if (overrides.workers !== undefined) s.workers = overrides.workers;
  if (overrides.hostname !== undefined) s.hostname = overrides.hostname;
  if (overrides.besPort !== undefined) checked.bes.port = overrides.besPort;
  if (overrides.url !== undefined) checked.database = { url: overrides.url };
  else if (overrides.data !== undefined) checked.database = { data: overrides.data };
  throwFaults(schemaFaults(validateOwn, checked, ownWording), 'command line');
  throwFaults(ownFaults(checked), where);

  const { database, bes, auth, limits } = checked;
  const faces = value as Record<string, unknown>;
  return {
    server: { hostname: s.hostname, host: s.host, port: s.port, workers: s.workers, stopTimeoutSeconds: s.stopTimeoutSeconds, ...(s.publicUrl !== undefined ? { publicUrl: s.publicUrl.replace(/\/+$/, '') } : {}) },
    bes: { ...bes, port: bes.port ?? null },
    database: database.url !== undefined ? { url: database.url } : { data: database.data ?? DEFAULT_DATA_DIR },
    auth: { signingKeys: auth.signingKeys === 'database' ? { kind: 'database' } : { kind: 'directory', path: auth.signingKeys }, signInLimits: auth.signInLimits },
    limits,
    export: faces['export'],
    provenance: faces['provenance'],
    cacheNodes: faces['cacheNodes'],
    playground: faces['playground'],
    retention: faces['retention'],
  };
}

/** Every face's typed settings, as each face's parse function makes them from its section. */
export interface FaceSettings {
  readonly export: ExportOptions;
  readonly provenance: ProvenanceConfig;
  readonly cacheNodes: CacheNodesSettings;
  readonly playground: PlaygroundSection;
  readonly retention: RetentionConfig;
}

/**
 * Checks every face section of a configuration (as `openServer` does before it opens the
 * database) and returns the typed settings; one ConfigError names the faults of all sections.
 */
export function faceSettings(config: ServerConfig): FaceSettings {
  const faults: Fault[] = [];
  const settings = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      faults.push(...e.faults);
      return undefined;
    }
  };
  const result = {
    export: settings(() => parseExportOptions(config.export)),
    provenance: settings(() => parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR)),
    cacheNodes: settings(() => parseCacheNodesSection(config.cacheNodes)),
    playground: settings(() => parsePlaygroundSection(config.playground)),
    retention: settings(() => parseRetentionConfig(config.retention, config.database)),
  };
  throwFaults(faults);
  return result as FaceSettings;
}

/** Why `server.publicUrl` cannot be used (an absolute http(s) URL without credentials, query or fragment), if it cannot. */
function publicUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not an absolute URL: ${JSON.stringify(text)} (expected e.g. https://scans.example.com)`;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return `expected an http:// or https:// address without credentials, query or fragment, got ${JSON.stringify(text)}`;
  }
  return undefined;
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
/** A whole number option of the command line, from `min` to `max`; a ConfigError naming the option otherwise. */
function integerOption(option: string, text: string | undefined, min: number, max: number, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new ConfigError(`${option}: not ${what}: ${text}`);
  return n;
}

export function configFromCli(o: CliDatabaseOptions): ServerConfig {
  if (o.data !== undefined && o.db !== undefined) throw new ConfigError('Give either --data or --db, not both');
  const port = integerOption('--port', o.port, 0, 65535, 'a port number');
  const besPort = integerOption('--bes-port', o.besPort, 0, 65535, 'a port number');
  const workers = integerOption('--workers', o.workers, 1, 64, 'a number of processes from 1 to 64');
  return loadConfig(o.config, {
    ...(besPort !== undefined ? { besPort } : {}),
    ...(o.host !== undefined ? { host: o.host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(o.hostname !== undefined ? { hostname: o.hostname } : {}),
    ...(workers !== undefined ? { workers } : {}),
    ...(o.data !== undefined ? { data: o.data } : {}),
    ...(o.db !== undefined ? { url: o.db } : {}),
  });
}
