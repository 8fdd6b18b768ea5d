// The server of the tests, in-process: the real app (buildApp) on 127.0.0.1 (port 0) over SQLite
// in a temp dir or a fresh PostgreSQL database, with helpers to make users, keys, tokens and
// builds. Every harness that needs the HTTP server in this process starts it here and adds what its
// tests need (plugins, configuration, data).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parseConfig, type ServerConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import type { BuildStore } from '../../src/store/types.js';
import { buildApp, type FacePlugin } from '../../src/http/app.js';
import { storeOptionsOf } from '../../src/server.js';
import { openAuth, type Auth, type AuthCacheOptions, type Permission } from '../../src/auth/index.js';
import { createLogger, type Logger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Credentials {
  readonly key: string;
  readonly password: string;
  /** Authorization header values. */
  readonly bearer: string;
  readonly basic: string;
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly app: FastifyInstance;
  readonly database: DatabaseHandle;
  readonly store: BuildStore;
  readonly auth: Auth;
  readonly config: ServerConfig;
  /** The store's clock when the server was started without `storeClock`: availableAt of the next ingested builds. */
  storeNow: number;
  /** A user with the given grants and a fresh access key (expires in a year unless `keyExpiresAt`); returns the key. */
  user(name: string, permissions: readonly Permission[], options?: { projects?: readonly string[] | null; password?: string; keyExpiresAt?: number }): Promise<string>;
  /** The same, returning the key, the password (`<name>-pw` unless given) and both Authorization headers. */
  credentials(name: string, permissions: readonly Permission[], options?: { projects?: readonly string[] | null; password?: string; keyExpiresAt?: number }): Promise<Credentials>;
  token(key: string, query?: string): Promise<string>;
  get(path: string, auth?: string): Promise<Response>;
  ingest(lines: readonly string[], auth: string): Promise<Response>;
  /** Another server over the same database (e.g. with another hostname). */
  sibling(overrides?: { hostname?: string }): Promise<TestServer>;
  close(): Promise<void>;
}

const defaultLogger = createLogger('test', 'warn');

export interface Location {
  readonly dialect: Dialect;
  readonly data?: string;
  readonly url?: string;
  cleanup(): Promise<void>;
}

/** A fresh SQLite data directory (a temp dir) or PostgreSQL database, removed by `cleanup`. */
export async function newLocation(dialect: Dialect, prefix = 'buildscope-server-'): Promise<Location> {
  if (dialect === 'postgres') {
    const pg = (await createTestDatabase()) as TestDatabase;
    return { dialect, url: pg.url, cleanup: () => pg.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dialect, data: dir, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestServerOptions {
  /** server.hostname; scans.example.com by default, the configuration's default when null. */
  readonly hostname?: string | null;
  readonly publicUrl?: string;
  readonly plugins?: readonly FacePlugin[];
  /** More of the configuration file (server and database are set here). */
  readonly raw?: Record<string, unknown>;
  /** false: close() leaves the location (a sibling's). */
  readonly ownsLocation?: boolean;
  /** The server's clock (tokens, sessions, the authentication cache, sign-in limits); Date.now by default. */
  readonly clock?: () => number;
  /** The store's clock (availableAt); by default a settable one (`storeNow`) starting at 1_750_000_000_000. */
  readonly storeClock?: () => number;
  /** The server's authentication cache (its TTL); 5 s by default. */
  readonly authCache?: AuthCacheOptions;
  /** The logger of the app (and of the store when given); warnings only by default. */
  readonly logger?: Logger;
  /** Runs on the opened store before the app is built (e.g. ingests the builds the pages show). */
  readonly seed?: (store: BuildStore) => Promise<void>;
  /**
   * Connections still open when close() is called (keep-alive sockets of the tests' own fetch
   * calls): closed at once (0), after this many ms, or waited for (undefined).
   */
  readonly closeConnectionsAfterMs?: number;
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
export const bearer = (credential: string) => `Bearer ${credential}`;

export async function startTestServer(location: Location, options: TestServerOptions = {}): Promise<TestServer> {
  const hostname = options.hostname === undefined ? 'scans.example.com' : options.hostname;
  const config = parseConfig({
    ...(options.raw ?? {}),
    server: { ...(hostname !== null ? { hostname } : {}), host: '127.0.0.1', port: 0, ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}) },
    database: location.url !== undefined ? { url: location.url } : { data: location.data },
  });
  const logger = options.logger ?? defaultLogger;
  const state = { storeNow: 1_750_000_000_000 };
  let database: DatabaseHandle | undefined;
  let store: BuildStore | undefined;
  let app: FastifyInstance | undefined;
  const closeAll = async () => {
    if (app !== undefined) {
      const closing = app.close();
      const after = options.closeConnectionsAfterMs;
      const force = after === undefined ? undefined : setTimeout(() => app!.server.closeAllConnections(), after);
      if (after === 0) app.server.closeAllConnections();
      await closing;
      clearTimeout(force);
    }
    await store?.close();
    await database?.close();
    if (options.ownsLocation !== false) await location.cleanup();
  };
  try {
    database = await openDatabase(config.database);
    store = await openBuildStore(database, {
      clock: options.storeClock ?? (() => state.storeNow),
      // The limits as the server applies them (src/server.ts); the analytics index is read at its
      // first use rather than at start, as it always was for test servers.
      ...storeOptionsOf(config, { warm: false }),
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
    });
    await options.seed?.(store);
    // With a clock or cache of its own, the server's auth is the one the helpers use too.
    const own = options.clock !== undefined || options.authCache !== undefined ? await openAuth(database, config, options.clock, options.authCache) : undefined;
    app = await buildApp(
      { config, database, store, logger, ...(options.clock !== undefined ? { clock: options.clock } : {}) },
      { plugins: options.plugins ?? [], ...(own !== undefined ? { auth: own } : {}) },
    );
    const auth = own ?? (await openAuth(database, config));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const opened = { app, database, store };
    const server: TestServer = {
      url,
      port: Number(new URL(url).port),
      ...opened,
      auth,
      config,
      get storeNow() {
        return state.storeNow;
      },
      set storeNow(v: number) {
        state.storeNow = v;
      },
      async user(name, permissions, o = {}) {
        return (await server.credentials(name, permissions, o)).key;
      },
      async credentials(name, permissions, o = {}) {
        const password = o.password ?? `${name}-pw`;
        await auth.users.addUser({ name, password, permissions, projects: o.projects ?? null });
        const { key } = await auth.users.createAccessKey(name, { expiresAt: o.keyExpiresAt ?? Date.now() + 365 * 86_400_000 });
        return { key, password, bearer: bearer(key), basic: basic(name, password) };
      },
      async token(key, query = '') {
        const r = await fetch(`${url}/api/auth/token${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
        if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${await r.text()}`);
        return r.text();
      },
      get(path, authorization) {
        return fetch(url + path, { headers: authorization ? { authorization } : {} });
      },
      ingest(lines, authorization) {
        return fetch(`${url}/api/builds`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-ndjson' },
          body: lines.join('\n') + '\n',
        });
      },
      async sibling(o = {}) {
        return startTestServer(location, { ...options, seed: undefined, ...o, ownsLocation: false });
      },
      close: closeAll,
    };
    return server;
  } catch (e) {
    await closeAll();
    throw e;
  }
}
