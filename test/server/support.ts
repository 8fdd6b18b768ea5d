// A real server on 127.0.0.1 (port 0) over SQLite or PostgreSQL, with helpers to make users,
// keys, tokens and builds.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseConfig, type ServerConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import type { BuildStore } from '../../src/store/types.js';
import { buildApp, type FacePlugin } from '../../src/http/app.js';
import { openAuth, type Auth, type AuthCacheOptions, type Permission } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';

export type Dialect = 'sqlite' | 'postgres';

export interface TestServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly database: DatabaseHandle;
  readonly store: BuildStore;
  readonly auth: Auth;
  readonly config: ServerConfig;
  /** The store's clock: availableAt of the next ingested builds. */
  storeNow: number;
  /** A user with the given grants and a fresh access key (expires in `keyDays` days, default 365). */
  user(name: string, permissions: readonly Permission[], options?: { projects?: readonly string[]; password?: string; keyExpiresAt?: number }): Promise<string>;
  token(key: string, query?: string): Promise<string>;
  get(path: string, auth?: string): Promise<Response>;
  ingest(lines: readonly string[], auth: string): Promise<Response>;
  /** Another server over the same database (e.g. with another hostname). */
  sibling(overrides?: { hostname?: string }): Promise<TestServer>;
  close(): Promise<void>;
}

const logger = createLogger('test', 'warn');

export interface Location {
  readonly dialect: Dialect;
  readonly data?: string;
  readonly url?: string;
  cleanup(): Promise<void>;
}

export async function newLocation(dialect: Dialect): Promise<Location> {
  if (dialect === 'postgres') {
    const pg = (await createTestDatabase()) as TestDatabase;
    return { dialect, url: pg.url, cleanup: () => pg.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-server-'));
  return { dialect, data: dir, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startTestServer(
  location: Location,
  options: {
    hostname?: string;
    publicUrl?: string;
    plugins?: readonly FacePlugin[];
    raw?: Record<string, unknown>;
    ownsLocation?: boolean;
    /** The server's clock (tokens, sessions, the authentication cache, sign-in limits); Date.now by default. */
    clock?: () => number;
    /** The server's authentication cache (its TTL); 5 s by default. */
    authCache?: AuthCacheOptions;
  } = {},
): Promise<TestServer> {
  const config = parseConfig({
    ...(options.raw ?? {}),
    server: { hostname: options.hostname ?? 'scans.example.com', host: '127.0.0.1', port: 0, ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}) },
    database: location.url !== undefined ? { url: location.url } : { data: location.data },
  });
  const database = await openDatabase(config.database);
  const state = { storeNow: 1_750_000_000_000 };
  const store = await openBuildStore(database, { clock: () => state.storeNow, searchTimeoutMs: config.limits.searchTimeoutMs });
  // With a clock or cache of its own, the server's auth is the one the helpers use too.
  const own = options.clock !== undefined || options.authCache !== undefined ? await openAuth(database, config, options.clock, options.authCache) : undefined;
  const app = await buildApp(
    { config, database, store, logger, ...(options.clock !== undefined ? { clock: options.clock } : {}) },
    { plugins: options.plugins ?? [], ...(own !== undefined ? { auth: own } : {}) },
  );
  const auth = own ?? (await openAuth(database, config));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const server: TestServer = {
    url,
    app,
    database,
    store,
    auth,
    config,
    get storeNow() {
      return state.storeNow;
    },
    set storeNow(v: number) {
      state.storeNow = v;
    },
    async user(name, permissions, o = {}) {
      await auth.users.addUser({ name, password: o.password ?? `${name}-pw`, permissions, projects: o.projects ?? null });
      const { key } = await auth.users.createAccessKey(name, { expiresAt: o.keyExpiresAt ?? Date.now() + 365 * 86_400_000 });
      return key;
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
      return startTestServer(location, { ...options, ...o, ownsLocation: false });
    },
    async close() {
      await app.close();
      await store.close();
      await database.close();
      if (options.ownsLocation !== false) await location.cleanup();
    },
  };
  return server;
}

export interface BuildSpec {
  readonly id: string;
  readonly tool?: string;
  readonly project?: string;
  readonly outcome?: 'succeeded' | 'failed';
  readonly tags?: readonly string[];
  readonly start?: number;
  readonly user?: string;
  readonly finished?: boolean;
}

/** One NDJSON ingest line (event model of the spec). */
export function buildLine(b: BuildSpec): string {
  const start = b.start ?? 1_749_000_000_000;
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  const events = [ev(start, 'BuildStarted', {}), ev(start + 1, 'BuildAgent', { username: b.user ?? 'ci', publicHostname: 'agent-1.example.com' })];
  if (b.project !== undefined) events.push(ev(start + 2, 'ProjectStructure', { rootProjectName: b.project }));
  for (const t of b.tags ?? []) events.push(ev(start + 3, 'UserTag', { tag: t }));
  if (b.finished !== false) events.push(ev(start + 60_000, 'BuildFinished', { outcome: b.outcome ?? 'succeeded', failures: [] }));
  return JSON.stringify({ buildId: b.id, toolType: b.tool ?? 'native', toolVersion: '8.10.2', agentVersion: '3.19', events });
}

/** A 13-character build ID from a number. */
export function buildId(n: number): string {
  return `b${n.toString(36).padStart(12, '0')}`;
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
export const bearer = (credential: string) => `Bearer ${credential}`;

/**
 * The authentication of a fresh SQLite data directory holding the user carol (password
 * `carol-secret`), opened before the tests of the describe block that calls this and closed after:
 * for the tests of password checks, which build authenticators of their own over its users.
 */
export function useCarolAuth(prefix: string): { readonly auth: Auth } {
  let dir: string;
  let database: DatabaseHandle;
  let auth: Auth | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    const config = parseConfig({ database: { data: dir } });
    database = await openDatabase(config.database);
    auth = await openAuth(database, config);
    await auth.users.addUser({ name: 'carol', password: 'carol-secret', permissions: ['accessBuildDataViaApi'] });
  });
  afterAll(async () => {
    await database?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get auth() {
      if (auth === undefined) throw new Error('useCarolAuth: read auth inside a test');
      return auth;
    },
  };
}
