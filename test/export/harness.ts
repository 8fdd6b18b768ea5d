// The test server (test/support/server.ts) with the export plugin, over SQLite (temp dir) or PostgreSQL, with
// users and keys, plus small raw-HTTP helpers (node:net) for exact bytes.

import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { exportPlugin } from '../../src/http/export-plugin.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { Auth } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import type { BuildStore } from '../../src/store/types.js';
import type { Permission } from '../../src/auth/types.js';
import { newLocation, startTestServer } from '../support/server.js';

export interface TestServer {
  readonly base: string;
  readonly port: number;
  readonly app: FastifyInstance;
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  readonly auth: Auth;
  /** Bearer access key of `exporter` (exportData). */
  readonly key: string;
  /** Authorization header values. */
  readonly bearer: string;
  readonly basic: string;
  close(): Promise<void>;
  /** Creates a user with a password and an access key; returns both headers. */
  addUser(name: string, permissions: readonly Permission[], projects?: readonly string[] | null): Promise<{ bearer: string; basic: string; key: string }>;
}

export interface TestServerOptions {
  readonly url?: string;
  readonly exportConfig?: unknown;
  /** Clock of the store (availableAt) and of the server. */
  readonly clock?: () => number;
}

/** The test server (test/support/server.ts) with the export plugin and the user `exporter`. */
export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  const location = options.url !== undefined ? { dialect: 'postgres' as const, url: options.url, cleanup: async () => undefined } : await newLocation('sqlite', 'bs-export-');
  const s = await startTestServer(location, {
    hostname: null,
    plugins: [exportPlugin],
    raw: { export: options.exportConfig ?? { heartbeatMs: 200, retryAfterSeconds: 2 } },
    logger: createLogger('export-test', 'silent'),
    storeClock: options.clock ?? Date.now,
    ...(options.clock ? { clock: options.clock } : {}),
    // A client connection that never sent a request (a pooled fetch socket) would hold close()
    // until the headers timeout; tests do not wait for that.
    closeConnectionsAfterMs: 500,
  });
  const addUser: TestServer['addUser'] = async (name, permissions, projects = null) => {
    const c = await s.credentials(name, permissions, { projects, password: `pw-${name}`, keyExpiresAt: Date.now() + 86_400_000 });
    return { key: c.key, bearer: c.bearer, basic: c.basic };
  };
  const exporter = await addUser('exporter', ['exportData']);
  return {
    base: s.url,
    port: s.port,
    app: s.app,
    store: s.store,
    database: s.database,
    auth: s.auth,
    key: exporter.key,
    bearer: exporter.bearer,
    basic: exporter.basic,
    addUser,
    close: () => s.close(),
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The body as sent (chunked transfer coding removed, content coding kept). */
  readonly raw: Buffer;
  /** The body decoded (gunzipped when gzip). */
  readonly text: string;
}

/** Sends one GET over a raw socket and reads until the server closes or `until` says stop. */
export function rawGet(port: number, path: string, headers: Record<string, string> = {}, options: { method?: string; until?: (decodedSoFar: string) => boolean; timeoutMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const lines = [`${options.method ?? 'GET'} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(lines.join('\r\n') + '\r\n\r\n');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`rawGet ${path}: timeout; got ${Buffer.concat(chunks).toString('latin1').slice(0, 500)}`));
    }, options.timeoutMs ?? 10_000);
    const finish = (cutOff = false): void => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), cutOff));
      } catch (e) {
        reject(e as Error);
      }
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (options.until) {
        try {
          const partial = parseResponse(Buffer.concat(chunks), true);
          if (options.until(partial.text)) {
            socket.destroy();
            finish(true);
          }
        } catch {
          /* not enough yet */
        }
      }
    });
    socket.on('end', () => finish());
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function parseResponse(all: Buffer, partial = false): RawResponse {
  const headEnd = all.indexOf('\r\n\r\n');
  if (headEnd < 0) throw new Error('no complete header');
  const head = all.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(head[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = all.subarray(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const out: Buffer[] = [];
    let pos = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', pos);
      if (lineEnd < 0) break;
      const size = parseInt(body.subarray(pos, lineEnd).toString('latin1'), 16);
      if (size === 0 || Number.isNaN(size)) break;
      if (lineEnd + 2 + size > body.length) break;
      out.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      pos = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(out);
  }
  let text: string;
  if (headers['content-encoding'] === 'gzip') {
    // A cut-off stream is decoded as far as it goes (sync-flushed blocks are complete).
    text = partial ? gunzipPartial(body) : gunzipSync(body).toString();
  } else text = body.toString();
  return { status, headers, raw: body, text };
}

function gunzipPartial(body: Buffer): string {
  try {
    return gunzipSync(body, { finishFlush: 2 /* Z_SYNC_FLUSH */ }).toString();
  } catch {
    return '';
  }
}
