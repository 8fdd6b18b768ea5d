// The cache node: the HTTP build cache protocol on node:http (no framework on the hot path; a hit
// on a small entry is a Map lookup and one write), the UI, registration and live configuration.
//
//   GET  /cache/{key}  200 with the entry | 404
//   HEAD /cache/{key}  200 with Content-Length | 404
//   PUT  /cache/{key}  201 (new) | 204 (replaced) | 413 (larger than maxArtifactSize; after the
//                      whole body is read) | 202 (larger, from Gradle < 7: discarded, see below)
//   GET  /  /status.json  the UI (per uiAccess)     GET /ping  200 (health, no credentials)
//   GET  /metrics  Prometheus metrics (per uiAccess)  GET /health/live, /health/ready (no credentials)
//   GET/HEAD/PUT /ac/{sha256} and /cas/{sha256}  Bazel's HTTP cache protocol (bazel-http.ts)
//   and, with grpcPort, the Remote Execution API's cache over gRPC on a port of its own (grpc-server.ts)

//
// This file starts and stops the node: the HTTP server and its dispatch, the configuration file's
// reloads and the timers. The protocol is in entries.ts, the other pages in pages.ts, the node's
// state in state.ts.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { createLogger, type Logger } from '../log.js';
import type { FailureLimiterOptions, HashGateOptions } from '../auth/hash-gate.js';
import { formatFaults, loadConfigFile, type NodeConfig } from './config.js';
import { ConfigError } from '../config/schema-check.js';
import type { Registrar } from './registration.js';
import { continueUpload, handleGet, handlePut } from './entries.js';
import { handlePage } from './pages.js';
import { handleBazel, parseBazelPath } from './bazel-http.js';
import { sendProblem } from './responses.js';
import { NodeState } from './state.js';
import { DiskStore, KEY_PATTERN } from './storage.js';
import { nodeMetrics } from './metrics.js';
import { startGrpc, type GrpcEndpoint } from './grpc-server.js';
import { summarize, type NodeStatus } from './ui.js';

export const DEFAULT_PORT = 5071;
export { NODE_VERSION } from './state.js';
export { gradleWithout413 } from './entries.js';

export interface CacheNodeOptions {
  /** The configuration file; watched for changes unless `watch` is false. */
  readonly configFile: string;
  readonly dataDir: string;
  readonly port?: number;
  readonly host?: string;
  readonly watch?: boolean;
  readonly clock?: () => number;
  readonly logger?: Logger;
  /** How often a registered node reports to the server (default 60 s). */
  readonly reportIntervalMs?: number;
  /** Bounds of password checks (defaults in src/auth/hash-gate.ts and docs/cache-node.md). */
  readonly passwordChecks?: HashGateOptions & Omit<FailureLimiterOptions, 'clock'>;
  /** Serve the Remote Execution API's cache over gRPC on this port (0: any free port); none when omitted. */
  readonly grpcPort?: number;
  /** Writes of Bazel's protocols running at once before more are refused (default 64, write-slots.ts). */
  readonly maxConcurrentWrites?: number;
}

/** What password checking has cost and refused since the node started. */
export interface PasswordCheckStats {
  /** scrypt derivations, unknown user names included. */
  readonly hashes: number;
  /** The most derivations that ran at once, and the bound. */
  readonly peakConcurrent: number;
  readonly concurrency: number;
  /** 429s because the client had too many failed checks within the window. */
  readonly refusedTooManyFailures: number;
  /** 429s because too many checks were already waiting for a slot. */
  readonly refusedBusy: number;
  /** Checks waiting for a slot now. */
  readonly waiting: number;
}

export interface CacheNode {
  readonly url: string;
  readonly port: number;
  /** The gRPC endpoint (grpc://host:port) when started with grpcPort, else null. */
  readonly grpcUrl: string | null;
  readonly grpcPort: number | null;
  readonly store: DiskStore;
  config(): NodeConfig;
  /** Credentials of `uiAccess: generated` (null for other kinds). */
  generatedUiCredentials(): { username: string; password: string } | null;
  status(): NodeStatus;
  passwordChecks(): PasswordCheckStats;
  registrar(): Registrar | null;
  /** Reads the configuration file again; on faults the running configuration stays. */
  reload(): Promise<boolean>;
  close(): Promise<void>;
}

export async function startCacheNode(options: CacheNodeOptions): Promise<CacheNode> {
  const logger = options.logger ?? createLogger('cache-node');
  const clock = options.clock ?? Date.now;
  const configFile = resolvePath(options.configFile);
  const first = await loadConfigFile(configFile);
  if (!first.ok) throw new ConfigError(first.faults, configFile);
  const store = await DiskStore.open(resolvePath(options.dataDir), { clock, logger });
  const node = new NodeState({ store, config: first.config, logger, clock, reportIntervalMs: options.reportIntervalMs ?? 60_000, passwordChecks: options.passwordChecks, maxConcurrentWrites: options.maxConcurrentWrites });
  const metrics = nodeMetrics(() => node.status(), () => node.writeSlots.active);

  /** Cache requests are dispatched synchronously so that a hit answered from memory makes no promise. */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (!path.startsWith('/cache/')) {
      const bazel = parseBazelPath(path);
      if (bazel === null) return handlePage(node, metrics, req, res, path);
      if ('fault' in bazel) {
        sendProblem(res, 400, bazel.fault);
        return undefined;
      }
      return handleBazel(node, req, res, bazel.part, bazel.hash);
    }
    let key = path.slice(7);
    if (key.includes('%')) {
      try {
        key = decodeURIComponent(key);
      } catch {
        // Malformed percent-encoding: refused as not a key below.
      }
    }
    if (!KEY_PATTERN.test(key)) {
      sendProblem(res, 400, `Not a cache key: ${JSON.stringify(key.slice(0, 100))} (letters, digits, '.', '_', '-'; at most 255)`);
      return undefined;
    }
    switch (req.method) {
      case 'GET':
        return handleGet(node, req, res, key, false);
      case 'HEAD':
        return handleGet(node, req, res, key, true);
      case 'PUT':
        return handlePut(node, req, res, key);
      default:
        sendProblem(res, 405, `${req.method} is not supported on cache entries`, { allow: 'GET, HEAD, PUT' });
        return undefined;
    }
  }

  const failed = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    logger.error({ err, url: req.url, method: req.method }, 'request failed');
    if (!res.headersSent) sendProblem(res, 500, 'The node could not complete the request; the error is logged');
    else res.destroy();
  };
  const server: Server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    try {
      handle(req, res)?.catch((err: unknown) => failed(req, res, err));
    } catch (err) {
      failed(req, res, err);
    }
  });
  // Expect: 100-continue: refuse an oversized or unauthorised upload before its body is sent.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      // (The handler below checks access again; a remembered check makes that free.) The client
      // waits for 100 before sending the body; a refusal now means the body never comes.
      if (req.method === 'PUT' && req.url?.startsWith('/cache/') && !(await continueUpload(node, req, res))) return;
      res.writeContinue();
      server.emit('request', req, res);
    })().catch((err: unknown) => {
      logger.error({ err, url: req.url }, 'request failed');
      res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? DEFAULT_PORT);
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let grpcEndpoint: GrpcEndpoint | null = null;
  if (options.grpcPort !== undefined) {
    try {
      grpcEndpoint = await startGrpc(node, options.grpcPort, host);
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw err;
    }
  }
  logger.info({ url, grpcUrl: grpcEndpoint?.url ?? null, data: store.dir, config: configFile }, 'cache node listening');

  const flushTimer = setInterval(() => void store.flushAccessTimes(), 5_000);
  flushTimer.unref();
  const sweepTimer = setInterval(() => void store.scheduleEviction(), 60_000);
  sweepTimer.unref();

  async function reload(): Promise<boolean> {
    const r = await loadConfigFile(configFile);
    if (!r.ok) {
      logger.error(`configuration file ${configFile} has faults; the running configuration stays in force:\n${formatFaults(r.faults)}`);
      return false;
    }
    node.applyConfig(r.config, false);
    logger.info({ config: summarize(r.config) }, 'configuration reloaded');
    return true;
  }

  // Watch the directory, not the file: editors replace files by renaming, which ends a file watch.
  let watcher: FSWatcher | null = null;
  let debounce: NodeJS.Timeout | null = null;
  if (options.watch !== false) {
    watcher = watch(dirname(configFile), (_event, name) => {
      if (name !== null && name !== basename(configFile)) return;
      if (debounce) clearTimeout(debounce);
      debounce = setTimeout(() => void reload(), 150);
    });
    watcher.on('error', (err) => logger.error({ err }, 'watching the configuration file failed; changes need a restart'));
  }

  return {
    url,
    port,
    grpcUrl: grpcEndpoint?.url ?? null,
    grpcPort: grpcEndpoint?.port ?? null,
    store,
    config: () => node.config,
    generatedUiCredentials: () => node.generated,
    status: () => node.status(),
    passwordChecks: () => ({
      hashes: node.gate.hashes,
      peakConcurrent: node.gate.peakActive,
      concurrency: node.gate.concurrency,
      refusedTooManyFailures: node.failures.refused,
      refusedBusy: node.gate.refusedBusy,
      waiting: node.gate.waiting,
    }),
    registrar: () => node.registrar,
    reload,
    async close() {
      watcher?.close();
      if (debounce) clearTimeout(debounce);
      clearInterval(flushTimer);
      clearInterval(sweepTimer);
      node.stop();
      await grpcEndpoint?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.flushAccessTimes();
    },
  };
}
