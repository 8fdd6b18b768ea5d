// The `server` section: the HTTP server (listen address and port, public name and address,
// processes, shutdown). One descriptor of src/config/sections.ts.

import { faultAt, type Agrees, type Fault } from './schema-check.js';
import { ownSection } from './section.js';

export const DEFAULT_PORT = 5080;

export const DEFAULT_HOST = '127.0.0.1';
/** Seconds a shutdown may take (server.stopTimeoutSeconds; the cache node and the provenance service too). */
export const DEFAULT_STOP_TIMEOUT_SECONDS = 30;

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

export const portNumber = { type: 'integer', minimum: 0, maximum: 65_535 } as const;

export const serverSchema = {
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

const agrees: Agrees<typeof serverSchema, ServerSection> = true;
void agrees;

export const serverSection = ownSection({
  name: 'server',
  schema: serverSchema,
  // The only pattern is the host name's (not blank).
  wording: { pattern: () => 'must not be empty' },
  faults(s: ServerSection): Fault[] {
    const problem = s.publicUrl === undefined ? undefined : publicUrlProblem(s.publicUrl);
    return problem === undefined ? [] : [faultAt(['publicUrl'], problem)];
  },
  parse: (s: ServerSection): ServerSection => ({
    hostname: s.hostname,
    host: s.host,
    port: s.port,
    workers: s.workers,
    stopTimeoutSeconds: s.stopTimeoutSeconds,
    ...(s.publicUrl !== undefined ? { publicUrl: s.publicUrl.replace(/\/+$/, '') } : {}),
  }),
});

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
