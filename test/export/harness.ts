// A real server with the export plugin on 127.0.0.1, over SQLite (temp dir) or PostgreSQL, with
// users and keys, plus small raw-HTTP helpers (node:net) for exact bytes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { exportPlugin } from '../../src/http/export-plugin.js';
import { parseConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openAuth, type Auth } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import type { BuildStore } from '../../src/store/types.js';
import type { Permission } from '../../src/auth/types.js';

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

export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = options.url === undefined ? mkdtempSync(join(tmpdir(), 'bs-export-')) : undefined;
  const config = parseConfig({ export: options.exportConfig ?? { heartbeatMs: 200, retryAfterSeconds: 2 } }, options.url !== undefined ? { url: options.url } : { data: dir! });
  const database = await openDatabase(config.database);
  const logger = createLogger('export-test', 'silent');
  const store = await openBuildStore(database, { logger, ...(options.clock ? { clock: options.clock } : {}) });
  let app: FastifyInstance;
  try {
    app = await buildApp({ config, database, store, logger, ...(options.clock ? { clock: options.clock } : {}) }, { plugins: [exportPlugin] });
  } catch (e) {
    await store.close();
    await database.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const auth = await openAuth(database, config);
  const addUser: TestServer['addUser'] = async (name, permissions, projects = null) => {
    await auth.users.addUser({ name, password: `pw-${name}`, permissions, projects });
    const { key } = await auth.users.createAccessKey(name, { expiresAt: Date.now() + 86_400_000 });
    return { key, bearer: `Bearer ${key}`, basic: `Basic ${Buffer.from(`${name}:pw-${name}`).toString('base64')}` };
  };
  const exporter = await addUser('exporter', ['exportData']);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    app,
    store,
    database,
    auth,
    key: exporter.key,
    bearer: exporter.bearer,
    basic: exporter.basic,
    addUser,
    async close() {
      // A client connection that never sent a request (a pooled fetch socket) would hold close()
      // until the headers timeout; tests do not wait for that.
      const force = setTimeout(() => app.server.closeAllConnections(), 500);
      await app.close();
      clearTimeout(force);
      await store.close();
      await database.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
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
