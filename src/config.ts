// The server's configuration: one YAML file for everything an operator sets, overridable from the
// command line. Each section of the file is one descriptor (name, schema, wording, faults, parse),
// listed in src/config/sections.ts; this module derives from that list the whole file's JSON
// Schema (`serverConfigSchema`), the checks of a file (with line and column for every fault,
// before anything else runs), the typed configuration and every face's settings.
// src/config/schema-check.ts does the checking and wording.

import { readFileSync } from 'node:fs';
import {
  ConfigError,
  compileSchema,
  locateFaults,
  parseSource,
  schemaFaults,
  throwFaults,
  withoutNulls,
  within,
  type Fault,
  type Wording,
} from './config/schema-check.js';
import { FACE_SECTIONS, OWN_SECTIONS, SECTIONS, type CheckedOf, type FaceSectionOf, type OwnSectionOf } from './config/sections.js';
import type { AnySection, SectionContext } from './config/section.js';
import { assertNever } from './query/assert.js';

export { ConfigError };
export { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_STOP_TIMEOUT_SECONDS, publicUrlOf, type ServerSection } from './config/server.js';
export { DEFAULT_BES_MAX_MESSAGE_BYTES, type BesCacheNode, type BesSection } from './config/bes.js';
export type { DatabaseSection } from './config/database.js';
export type { AuthSection, SigningKeys } from './config/auth.js';
export { DEFAULT_LIMITS, type Limits } from './config/limits.js';

/**
 * The configuration: every own section resolved by its descriptor's parse function, every face
 * section as written (nulls removed). A file's face sections are checked when it is read;
 * `faceSettings` turns them all into typed settings (each with its face's parse function, the same
 * schema), which `openServer` does once before it opens the database and hands to the faces
 * (FacePluginOptions in src/http/context.ts); no face parses its section itself.
 */
export type ServerConfig = { readonly [S in OwnSectionOf as S['name']]: ReturnType<S['parse']> } & { readonly [S in FaceSectionOf as S['name']]: unknown };

/** Every face's typed settings, as each face's parse function makes them from its section. */
export type FaceSettings = { readonly [S in FaceSectionOf as S['name']]: ReturnType<S['parse']> };

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
  properties: Object.fromEntries(SECTIONS.map((s) => [s.name, s.schema])),
} as const;

/** The top level and the server's own sections; a face section may be anything here (see parseConfig). */
const validateOwn = compileSchema({
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries([...OWN_SECTIONS.map((s): [string, object | true] => [s.name, s.schema]), ...FACE_SECTIONS.map((s): [string, object | true] => [s.name, true])]),
});

/** The own sections' wording, each section's for its own settings. */
const ownWording: Wording = {
  pattern: (segments, data) => OWN_SECTIONS.find((s) => s.name === segments[0])?.wording?.pattern?.(segments.slice(1), data),
};

/** Names in the file whose entries are the operator's own names (a null entry is kept). */
const KEEP_NULLS: ReadonlySet<string> = new Set(FACE_SECTIONS.flatMap((s) => [...(s.keepNulls ?? [])]));

/** The own sections as the schema leaves them (defaults filled in). */
type CheckedOwn = { [S in OwnSectionOf as S['name']]: CheckedOf<S> };

/** What the schema cannot say about the server's own sections (paths from the top of the file). */
function ownFaults(c: CheckedOwn): Fault[] {
  const sections = c as unknown as Readonly<Record<string, unknown>>;
  return OWN_SECTIONS.flatMap((s) => within([s.name], s.faults?.(sections[s.name]) ?? []));
}

/** Faults of a whole file's value: the schema first, then (on a file the schema accepts) what it cannot say. */
export function configFaults(value: unknown): Fault[] {
  const checked = structuredClone(withoutNulls(value ?? {}, KEEP_NULLS));
  const faults = schemaFaults(validateOwn, checked, ownWording);
  if (checked === null || typeof checked !== 'object' || Array.isArray(checked)) return faults;
  const sections = checked as Record<string, unknown>;
  for (const face of FACE_SECTIONS) {
    const section = sections[face.name];
    if (section !== undefined) faults.push(...within([face.name], schemaFaults(face.validate, section, face.wording)));
  }
  if (faults.length > 0) return faults;
  const c = checked as CheckedOwn;
  const context: SectionContext = { database: c.database };
  return [...ownFaults(c), ...FACE_SECTIONS.flatMap((face) => within([face.name], face.faults?.(sections[face.name] ?? {}, context) ?? []))];
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
 * its face's parse function, which `openServer` calls for every face (faceSettings) before it
 * opens the database. (loadConfig has checked the faces of a file already.)
 */
export function parseConfig(raw: unknown, overrides: ConfigOverrides = {}, where?: string): ServerConfig {
  const value = withoutNulls(raw ?? {}, KEEP_NULLS) as Record<string, unknown>;
  const checked = structuredClone(value);
  throwFaults(schemaFaults(validateOwn, checked, ownWording), where);
  // Command-line settings win; they are checked by the same schema as the file's.
  applyOverrides(checked as Record<string, Record<string, unknown>>, overrides);
  throwFaults(schemaFaults(validateOwn, checked, ownWording), 'command line');
  throwFaults(ownFaults(checked as CheckedOwn), where);
  const sections: readonly AnySection[] = SECTIONS;
  try {
    return Object.fromEntries(sections.map((s) => [s.name, resolved(s, checked, value)])) as ServerConfig;
  } catch (e) {
    // A section's parse reads what the file names (a passwordFile): its fault names the file too.
    if (e instanceof ConfigError && e.faults.length > 0 && where !== undefined) throw new ConfigError(e.faults, where);
    throw e;
  }
}

/** A section of ServerConfig: an own section resolved by its descriptor, a face section as written. */
function resolved(s: AnySection, checked: Readonly<Record<string, unknown>>, written: Readonly<Record<string, unknown>>): unknown {
  switch (s.kind) {
    case 'own':
      return s.parse(checked[s.name]);
    case 'face':
      return written[s.name];
    default:
      return assertNever(s, 'section kind');
  }
}

/** The command line's settings put into the checked sections (which the schema has filled in). */
function applyOverrides(c: Record<string, Record<string, unknown>>, o: ConfigOverrides): void {
  const server = c['server'] ?? {};
  if (o.host !== undefined) server['host'] = o.host;
  if (o.port !== undefined) server['port'] = o.port;
  if (o.workers !== undefined) server['workers'] = o.workers;
  if (o.hostname !== undefined) server['hostname'] = o.hostname;
  if (o.besPort !== undefined) (c['bes'] ?? {})['port'] = o.besPort;
  if (o.url !== undefined) c['database'] = { url: o.url };
  else if (o.data !== undefined) c['database'] = { data: o.data };
}

/**
 * Checks every face section of a configuration (as `openServer` does before it opens the
 * database) and returns the typed settings; one ConfigError names the faults of all sections.
 */
export function faceSettings(config: ServerConfig): FaceSettings {
  const faults: Fault[] = [];
  const settings: Record<string, unknown> = {};
  const sections = config as unknown as Readonly<Record<string, unknown>>;
  const context: SectionContext = { database: config.database };
  for (const face of FACE_SECTIONS) {
    try {
      settings[face.name] = face.parse(sections[face.name], context);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      faults.push(...e.faults);
    }
  }
  throwFaults(faults);
  return settings as FaceSettings;
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
