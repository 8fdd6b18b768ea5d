// The composition root: starts a Buildscope server from its configuration. It opens the database,
// the build store and every service once (openServices: auth, metrics, the cache registry, the
// provenance service; the retention job and the Build Event Service endpoint here), hands them to
// the HTTP app and the endpoint, creates the first user on a fresh database, loads demo builds on
// first start, listens, and shuts down cleanly. The standalone provenance service is composed here
// too (buildStandaloneApp). Everything that matters lives in the database, so several processes
// over one PostgreSQL database serve the same data, users, keys and tokens.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { faceSettings, publicUrlOf, type ServerConfig } from './config.js';
import { DEFAULT_DATA_DIR, openDatabase, type DatabaseHandle } from './db/database.js';
import { openBuildStore, type BuildStoreOptions } from './store/build-store.js';
import type { BuildStore } from './store/types.js';
import { createLogger, type Logger } from './log.js';
import { buildApp, type FacePlugin } from './http/app.js';
import type { ServerServices } from './http/context.js';
import { openServices } from './http/services.js';
import { createServerMetrics } from './metrics/server-metrics.js';
import { PERMISSION_NAMES, UserError } from './auth/index.js';
import { exportPlugin } from './http/export-plugin.js';
import { provenancePlugin } from './http/provenance-plugin.js';
import { cacheRegistryPlugin } from './http/cache-registry-plugin.js';
import { playgroundPlugin } from './http/playground-plugin.js';
import type { BesEndpoint, BesServer } from './bes/server.js';
import { besLinksPlugin } from './http/bes-links-plugin.js';
import { sessionPlugin } from './http/session-plugin.js';
import { webPlugin } from './http/web-plugin.js';
import { retentionEnabled } from './retention/config.js';
import { RetentionJob } from './retention/job.js';
import { DEFAULT_OUTPUT_BOUNDS } from './store/ingest/output-bounds.js';

export interface StartOptions {
  readonly config: ServerConfig;
  /** Demo builds to load when the store is empty (first start). */
  readonly demo?: number;
  readonly plugins?: readonly FacePlugin[];
  readonly logger?: Logger;
  /** Where the start-up lines for the operator go (stdout by default). */
  readonly print?: (line: string) => void;
  /** Between two runs of the retention job (default 60 s; tests run it more often). */
  readonly retentionIntervalMs?: number;
}

export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  /** Credentials of the first user, when this start created them. */
  readonly created?: { readonly user: string; readonly password: string; readonly accessKey: string };
  /** The Build Event Service endpoint (`grpc://host:port`), when configured (`bes.port`). */
  readonly besUrl?: string;
  /** What the Build Event Service endpoint holds of unfinished invocations, when it is on. */
  readonly besStats?: () => { invocations: number; bytes: number };
  /** The services every face of this server was handed (one auth for the HTTP app and the endpoint). */
  readonly services: ServerServices;
  close(): Promise<void>;
}

export const ADMIN_USER = 'admin';
const DAY = 86_400_000;

interface OpenedServer {
  readonly app: FastifyInstance;
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  /** The services of the server's faces; its auth is the one of HTTP and of the Build Event Service. */
  readonly services: ServerServices;
  readonly created: RunningServer['created'];
  /** Started by startServer only (not by the primary's prepareServer). */
  readonly retention: RetentionJob | undefined;
  /** The Build Event Service endpoint when `bes.port` is set; startServer makes it listen. */
  readonly bes: BesEndpoint | undefined;
  close(): Promise<void>;
}

/**
 * Everything but listening, in an order that keeps a failed start harmless: the configuration is
 * checked, then the database, store and every service are opened (each once) and the app with its
 * faces is made ready; only then does a first start create the administrator and load demo builds.
 */
async function openServer(options: StartOptions, logger: Logger): Promise<OpenedServer> {
  const { config } = options;
  // Every face section, checked before anything touches the database: a mistake in one must not
  // leave a half-prepared first start behind (a migrated database whose generated administrator
  // password was never shown).
  const faces = faceSettings(config);
  const database = await openDatabase(config.database);
  let store: BuildStore | undefined;
  let app: FastifyInstance | undefined;
  let retention: RetentionJob | undefined;
  let bes: BesEndpoint | undefined;
  try {
    logger.info({ database: database.describe }, 'opening the build store');
    const metrics = createServerMetrics(database, () => store?.waitingForNewBuilds() ?? 0);
    store = await openBuildStore(database, { logger, ...storeOptionsOf(config, { warm: true }), onIngested: (results) => metrics.recordIngest(results) });
    const plugins = options.plugins ?? (await facePlugins());
    // The app's address is known once it listens; the provenance service's links ask for it then.
    const publicUrl = () => publicUrlOf(config.server, app?.server.address() ?? null);
    const services = await openServices({ config, database, store, logger }, { plugins, publicUrl, faces, metrics });
    const { auth } = services;
    const retentionConfig = faces.retention;
    retention = retentionEnabled(retentionConfig)
      ? new RetentionJob({
          store,
          database,
          config: retentionConfig,
          logger,
          ...(config.database.data !== undefined ? { dataDir: config.database.data } : {}),
          ...(options.retentionIntervalMs !== undefined ? { intervalMs: options.retentionIntervalMs } : {}),
        })
      : undefined;
    app = await buildApp({ config, database, store, logger, ...(retention ? { refuseIngest: retention.refuseIngest } : {}) }, { plugins, services });
    await app.ready();
    if (config.bes.port !== null) {
      // Loaded on demand: gRPC is only needed when the endpoint is on. The app's own auth: one
      // cache, one password gate and one set of sign-in limits for both faces.
      const { openBesEndpoint } = await import('./bes/server.js');
      bes = openBesEndpoint({ ...config.bes, store, authenticator: auth.authenticator, logger });
    }

    // First start: an administrator with every permission, a generated password and an access key.
    let created: RunningServer['created'];
    if ((await auth.users.countUsers()) === 0) {
      const password = randomBytes(12).toString('base64url');
      try {
        await auth.users.addUser({ name: ADMIN_USER, password, permissions: PERMISSION_NAMES });
        const { key } = await auth.users.createAccessKey(ADMIN_USER, { expiresAt: Date.now() + config.limits.accessKeyDefaultDays * DAY });
        created = { user: ADMIN_USER, password, accessKey: key };
      } catch (e) {
        // Another process over the same database created it first.
        if (!(e instanceof UserError)) throw e;
      }
    }

    if (options.demo !== undefined && options.demo > 0 && (await store.latestSeq()) === 0) {
      await loadDemo(store, options.demo, logger);
    }

    const openStore = store;
    const openApp = app;
    const openRetention = retention;
    const openBes = bes;
    let closing: Promise<void> | undefined;
    return {
      app: openApp,
      store: openStore,
      database,
      services,
      created,
      retention: openRetention,
      bes: openBes,
      close() {
        closing ??= (async () => {
          await openBes?.close();
          await openRetention?.stop();
          await openApp.close();
          await openStore.close();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (e) {
    await bes?.close().catch(() => undefined);
    await app?.close().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw e;
  }
}

/** Where the start-up lines go unless StartOptions.print says otherwise. */
export const printToStdout = (line: string): void => void process.stdout.write(line + '\n');

/** The lines that tell the operator where the server is and how to sign in. */
export function startupLines(url: string, created: RunningServer['created'], playground: boolean): string[] {
  // The web pages and the playground are served together (facePlugins): the builds list first.
  const go = playground ? `${url}/builds` : `${url}/`;
  if (created) {
    return [
      `Created user '${created.user}' with password ${created.password} and access key ${created.accessKey} (shown only this once).`,
      `Buildscope is running at ${url}/ — open ${go} (sign in as ${created.user}) or call the API with "Authorization: Bearer ${created.accessKey}", e.g. curl -H "Authorization: Bearer ${created.accessKey}" '${url}/api/builds?since=0'`,
    ];
  }
  return [`Buildscope is running at ${url}/ — open ${go} or call the API with "Authorization: Bearer <access key>" (create one with: buildscope access-key create ${ADMIN_USER}), OpenAPI at ${url}/api/openapi.json`];
}

/**
 * The build store's options that the configuration's limits set: the search time limit, the
 * analytics index (off at 0 bytes; `warm`: read at start rather than at its first use) and the
 * console output kept a build. One mapping for the server and whatever else starts one.
 */
export function storeOptionsOf(config: ServerConfig, { warm }: { readonly warm: boolean }): Pick<BuildStoreOptions, 'searchTimeoutMs' | 'analyticsIndex' | 'outputBounds'> {
  const { limits } = config;
  return {
    searchTimeoutMs: limits.searchTimeoutMs,
    analyticsIndex: limits.analyticsIndexBytes === 0 ? false : { maxBytes: limits.analyticsIndexBytes, warm },
    outputBounds: { ...DEFAULT_OUTPUT_BOUNDS, consoleBytes: limits.consoleBytesPerBuild },
  };
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const logger = options.logger ?? createLogger('buildscope');
  const print = options.print ?? printToStdout;
  const opened = await openServer(options, logger);
  const { app, created } = opened;
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (e) {
    await opened.close().catch(() => undefined);
    throw e;
  }
  // After listening: a first pass over a large backlog runs in the background (each batch is short,
  // requests are served meanwhile); only the first disk measurement is awaited.
  await opened.retention?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.server.port;
  const shownHost = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${shownHost === '0.0.0.0' || shownHost === '[::]' ? 'localhost' : shownHost}:${port}`;
  let bes: BesServer | undefined;
  if (opened.bes !== undefined && config.bes.port !== null) {
    try {
      bes = await opened.bes.listen(config.server.host, config.bes.port);
    } catch (e) {
      await opened.close().catch(() => undefined);
      throw new Error(`The Build Event Service endpoint could not listen on port ${config.bes.port}: ${(e as Error).message}`);
    }
  }
  for (const line of startupLines(url, created, app.hasRoute({ method: 'GET', url: '/playground' }))) print(line);
  if (bes !== undefined) print(`Bazel Build Event Service at ${bes.url} — bazel build //... --bes_backend=${bes.url} --bes_header=Authorization=Bearer\\ <access key> --bes_results_url=${url}/builds/bazel/ (Bazel 4: --bes_keywords=buildscope_access_key=<access key>)`);
  const besServer = bes;
  return {
    url,
    app,
    store: opened.store,
    database: opened.database,
    ...(created ? { created } : {}),
    ...(besServer ? { besUrl: besServer.url, besStats: () => besServer.stats() } : {}),
    services: opened.services,
    // Closes the endpoint first, then the app, the store and the database.
    close: () => opened.close(),
  };
}

/**
 * What a first start does before listening (migrations, the first user, demo builds, the faces'
 * own set-up such as signing keys), then closes again: the primary of several server processes
 * runs it once, so that the workers it starts never race each other for it.
 */
export async function prepareServer(options: StartOptions): Promise<{ created: RunningServer['created']; playground: boolean }> {
  const logger = options.logger ?? createLogger('buildscope');
  const opened = await openServer(options, logger);
  try {
    await opened.app.ready();
    return { created: opened.created, playground: opened.app.hasRoute({ method: 'GET', url: '/playground' }) };
  } finally {
    await opened.close();
  }
}

/** The faces served next to the REST API, in the order they are registered. */
export async function facePlugins(): Promise<FacePlugin[]> {
  return [sessionPlugin, exportPlugin, provenancePlugin, cacheRegistryPlugin, playgroundPlugin, webPlugin, besLinksPlugin];
}

async function loadDemo(store: BuildStore, builds: number, logger: Logger): Promise<void> {
  // Loaded on demand: the demo generator is only needed on a first start with --demo.
  const { demoBuilds } = await import('./store/demo/demo-data.js');
  logger.info({ builds }, 'loading demo builds (first start)');
  const started = Date.now();
  let last = 0;
  const results = await store.ingestNdjson(
    (async function* () {
      for (const line of demoBuilds({ builds })) yield line + '\n';
    })(),
    {
      // Before the server listens: nothing else waits on this thread.
      bulk: true,
      onProgress(done) {
        if (done - last >= Math.max(1000, Math.floor(builds / 10)) || done === builds) {
          last = done;
          logger.info({ done, of: builds }, `demo builds: ${done}/${builds} (${Math.round((100 * done) / builds)}%)`);
        }
      },
    },
  );
  const rejected = results.filter((r) => r.status === 'rejected').length;
  logger.info({ builds: results.length - rejected, rejected, ms: Date.now() - started }, 'demo builds loaded');
}

export interface StandaloneOptions {
  /** The server configuration: database (users and keys of callers), `provenance` section, host and port. */
  readonly config: ServerConfig;
  /** Base URL of the Buildscope server whose builds are read. */
  readonly serverUrl: string;
  /** Access key used to read builds from that server. */
  readonly accessKey: string;
  readonly logger: Logger;
}

/**
 * The provenance service on its own (`buildscope provenance`), reading builds over a Buildscope
 * server's REST API. Callers authenticate against the users and access keys of the local database
 * (`buildscope user`, `buildscope access-key` with the same --data/--db). Its own small
 * composition: a database, the auth and the provenance service, opened once here.
 */
export async function buildStandaloneApp(options: StandaloneOptions): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  // Loaded here: the standalone service needs none of the store, the search or the other faces.
  const { default: Fastify } = await import('fastify');
  const { openAuth } = await import('./auth/index.js');
  const { authPlugin } = await import('./http/auth-plugin.js');
  const { answerError } = await import('./http/app.js');
  const { sendBlankProblem } = await import('./http/problem.js');
  const { RemoteBuildSource } = await import('./provenance/build-source.js');
  const { openProvenanceService } = await import('./provenance/open.js');
  const { provenanceRoutes } = await import('./http/provenance-plugin.js');
  const { parseProvenanceConfig } = await import('./provenance/config.js');
  const { config, logger } = options;
  // The provenance section checked before the database is opened, as openServer does its faces'.
  const provenance = parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR);
  const database = await openDatabase(config.database);
  try {
    const auth = await openAuth(database, config);
    const service = openProvenanceService(provenance, new RemoteBuildSource(options.serverUrl, options.accessKey), () => options.serverUrl, logger);
    const app = Fastify({ loggerInstance: logger, disableRequestLogging: true, bodyLimit: config.limits.requestBodyBytes, maxParamLength: 500 }) as unknown as FastifyInstance;
    app.setErrorHandler(answerError);
    app.setNotFoundHandler((request, reply) => sendBlankProblem(reply, 404, `No resource at ${request.method} ${request.url.split('?')[0]}`));
    await app.register(authPlugin(auth.authenticator));
    await app.register(provenanceRoutes, { service, repositoryAccess: provenance.repositoryAccess });
    return {
      app,
      async close() {
        await app.close();
        await database.close();
      },
    };
  } catch (e) {
    await database.close().catch(() => undefined);
    throw e;
  }
}
