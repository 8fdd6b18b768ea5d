// The cache node: the HTTP build cache protocol on node:http (no framework on the hot path; a hit
// on a small entry is a Map lookup and one write), the UI, registration and live configuration.
//
//   GET  /cache/{key}  200 with the entry | 404
//   HEAD /cache/{key}  200 with Content-Length | 404
//   PUT  /cache/{key}  201 (new) | 204 (replaced) | 413 (larger than maxArtifactSize; after the
//                      whole body is read) | 202 (larger, from Gradle < 7: discarded, see below)
//   GET  /  /status.json  the UI (per uiAccess)     GET /ping  200 (health, no credentials)
//   GET  /metrics  Prometheus metrics (per uiAccess)  GET /health/live, /health/ready (no credentials)

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { problem } from '../errors/problem.js';
import { createLogger, type Logger } from '../log.js';
import { allowedAtOnce, costliest, decideCacheAccess, parseBasic, PasswordChecker, REALM, type Need } from './access.js';
import { FailureLimiter, HashGate, type FailureLimiterOptions, type HashGateOptions } from '../auth/hash-gate.js';
import { formatFaults, loadConfigFile, type NodeConfig } from './config.js';
import { ConfigError } from '../config/schema-check.js';
import { Registrar } from './registration.js';
import { closeEntry, openEntry, sendOpenFile, type OpenResult } from './send-file.js';
import { DiskStore, KEY_PATTERN, type EntryInfo } from './storage.js';
import { nodeMetrics } from './metrics.js';
import { renderPage, summarize, type NodeStatus } from './ui.js';

const MiB = 1024 * 1024;
export const DEFAULT_PORT = 5071;
export const NODE_VERSION = '1';

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

class TooLarge extends Error {}

/** Counts bytes and fails as soon as a body grows past the limit. */
function limiter(maxBytes: number, counted: { n: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      counted.n += chunk.length;
      if (counted.n > maxBytes) cb(new TooLarge());
      else cb(null, chunk);
    },
  });
}

/**
 * Whether an `X-Gradle-Version` is of a Gradle that takes a refused store (413 included) as an
 * error and disables its remote cache: every version before 7.0. Unreadable versions are assumed
 * to be current.
 */
export function gradleWithout413(version: string): boolean {
  const m = /^\s*(\d+)\./.exec(version);
  return m !== null && Number(m[1]) < 7;
}

/** Whom failed password checks are counted against: the peer address of the connection. */
function clientOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** Reads and discards the rest of a request body; false when the client went away first. */
function readToEnd(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      resolve(ok);
    };
    const onEnd = () => done(true);
    const onClose = () => done(req.complete);
    const onError = () => done(false);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
    req.resume();
  });
}

export async function startCacheNode(options: CacheNodeOptions): Promise<CacheNode> {
  const logger = options.logger ?? createLogger('cache-node');
  const clock = options.clock ?? Date.now;
  const configFile = resolvePath(options.configFile);
  const first = await loadConfigFile(configFile);
  if (!first.ok) throw new ConfigError(first.faults, configFile);
  let config = first.config;
  const store = await DiskStore.open(resolvePath(options.dataDir), { clock, logger });
  // One gate and one limiter for cache and UI checks: together they may not starve file reads.
  const gate = new HashGate(options.passwordChecks);
  const failures = new FailureLimiter({ ...options.passwordChecks, clock });
  const checker = new PasswordChecker(gate, failures, clock);
  const uiChecker = new PasswordChecker(gate, failures, clock);
  const startedAt = clock();
  const counters = { hits: 0, misses: 0, writes: 0, rejectedTooLarge: 0, discardedTooLarge: 0, bytesIn: 0, bytesOut: 0 };
  const metrics = nodeMetrics(status);
  let generated: { username: string; password: string } | null = null;
  let registrar: Registrar | null = null;
  let volumeCache: { at: number; capacity: number; free: number } | null = null;
  let lastTarget = Number.POSITIVE_INFINITY;

  /** Target size in bytes: fixed, or what the volume allows while keeping the free space buffer. */
  async function targetBytes(): Promise<number> {
    const ts = config.targetSize;
    switch (ts.type) {
      case 'fixed':
        lastTarget = ts.sizeMiB * MiB;
        return lastTarget;
      case 'maxAvailable': {
        const now = Date.now();
        if (!volumeCache || now - volumeCache.at > 2000) volumeCache = { at: now, ...(await store.volume()) };
        const buffer = config.freeSpaceBufferMiB * MiB;
        // Capacity minus the buffer, and never more than what is free now plus what the cache holds
        // (other files on the volume count against the cache, not against the buffer).
        lastTarget = Math.max(0, Math.min(volumeCache.capacity - buffer, store.bytes + volumeCache.free - buffer));
        return lastTarget;
      }
    }
  }

  function applyConfig(next: NodeConfig, initial: boolean): void {
    const previous = config;
    config = next;
    checker.reset(costliest([...next.users.values()].map((u) => u.password)));
    uiChecker.reset(next.uiAccess.type === 'secure' ? next.uiAccess.password.parameters : undefined);
    store.setLimits({ maxEntryAgeMs: next.maxEntryAgeHours === null ? null : next.maxEntryAgeHours * 3_600_000, targetBytes });
    if (next.uiAccess.type === 'generated') {
      if (!generated) {
        generated = { username: 'buildscope', password: randomBytes(18).toString('base64url') };
        // Logged once: these are the only credentials for the UI until the node restarts.
        logger.warn({ username: generated.username, password: generated.password }, 'node UI credentials generated (uiAccess: generated)');
      }
    } else {
      generated = null;
    }
    const regChanged = initial || JSON.stringify(previous.registration) !== JSON.stringify(next.registration);
    if (regChanged) {
      registrar?.stop();
      registrar = null;
      if (next.registration) {
        registrar = new Registrar(next.registration, status, logger, options.reportIntervalMs ?? 60_000);
        registrar.start();
      }
    }
    if (next.anonymousLevel === 'none' && next.users.size === 0) {
      logger.warn('no anonymous access and no users: nobody can use this cache; set cache.accessControl in the configuration file');
    }
    void store.scheduleEviction();
  }

  function status(): NodeStatus {
    return {
      version: NODE_VERSION,
      startedAt,
      entries: store.size,
      sizeBytes: store.bytes,
      targetBytes: lastTarget,
      ...counters,
      evicted: store.evictedCount,
      expired: store.expiredCount,
      config: summarize(config),
    };
  }

  function sendProblem(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
    const body = JSON.stringify(problem(status, detail));
    res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  }

  /** `extra`: headers for a refusal (Connection: close when a body will not be read). */
  async function checkAccess(req: IncomingMessage, res: ServerResponse, need: Need, extra: Record<string, string> = {}): Promise<boolean> {
    const d = await decideCacheAccess(config, checker, req.headers.authorization, need, clientOf(req), () => !req.socket.destroyed);
    switch (d.kind) {
      case 'allow':
        return true;
      case 'unauthorized':
        sendProblem(res, 401, d.detail, { 'www-authenticate': `Basic realm="${REALM}", charset="UTF-8"`, ...extra });
        return false;
      case 'forbidden':
        sendProblem(res, 403, d.detail, extra);
        return false;
      case 'tooMany':
        sendProblem(res, 429, d.detail, { 'retry-after': String(d.retryAfterSeconds), ...extra });
        return false;
    }
  }

  /**
   * An entry over maxArtifactSize whose body has been read to the end. Gradle before 7.0 takes any
   * refusal of a store, 413 included, as an error and switches its remote cache off for the rest
   * of the build; it gets a 202 (nothing stored, logged and counted) so that the build keeps its
   * cache. Every other client gets the 413.
   */
  function refuseTooLarge(req: IncomingMessage, res: ServerResponse, key: string, size: string): void {
    const gradle = req.headers['x-gradle-version'];
    if (typeof gradle === 'string' && gradleWithout413(gradle)) {
      counters.discardedTooLarge++;
      logger.warn({ key, size, gradleVersion: gradle, maxArtifactSizeMiB: config.maxArtifactMiB }, 'oversized entry discarded: answered 202 because Gradle before 7.0 disables its remote cache on a 413');
      res.writeHead(202, { 'content-length': 0 });
      res.end();
      return;
    }
    counters.rejectedTooLarge++;
    sendProblem(res, 413, `The entry is larger than maxArtifactSize (${config.maxArtifactMiB} MiB): ${size}`);
  }

  /** The disk, not the client, failed: 507 when it is full, 500 otherwise; logged either way. */
  function storageFailed(res: ServerResponse, err: Error): void {
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
    logger.error({ err }, full ? 'the volume is full; entry not stored' : 'storing an entry failed');
    sendProblem(res, full ? 507 : 500, full ? 'The cache volume is full; the entry was not stored' : 'The entry could not be stored; the error is logged');
  }

  /**
   * Hot path: a read allowed at once (anonymous, or credentials that already passed) of a miss, a
   * HEAD or an entry held in memory is answered synchronously (no promise, no await); everything
   * else goes on in the async part.
   */
  function handleGet(req: IncomingMessage, res: ServerResponse, key: string, head: boolean): Promise<void> | undefined {
    if (!allowedAtOnce(config, checker, req.headers.authorization, 'read')) return checkedGet(req, res, key, head);
    const info = store.lookup(key);
    if (!info) {
      if (!head) counters.misses++;
      sendProblem(res, 404, `No cache entry ${key}`);
      return undefined;
    }
    const held = head ? undefined : store.memoized(key);
    if (!head && !held) return serveGet(res, key, info, false);
    store.touch(key, info);
    const size = held ? held.length : info.size;
    if (held) {
      counters.hits++;
      counters.bytesOut += size;
    }
    res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(size)]);
    res.end(held);
    return undefined;
  }

  async function checkedGet(req: IncomingMessage, res: ServerResponse, key: string, head: boolean): Promise<void> {
    if (!(await checkAccess(req, res, 'read'))) return;
    const info = store.lookup(key);
    if (!info) {
      if (!head) counters.misses++;
      sendProblem(res, 404, `No cache entry ${key}`);
      return;
    }
    return serveGet(res, key, info, head);
  }

  async function serveGet(res: ServerResponse, key: string, info: EntryInfo, head: boolean): Promise<void> {
    store.touch(key, info);
    if (head) {
      res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(info.size)]);
      res.end();
      return;
    }
    const small = store.memoized(key) ?? (await store.small(key, info));
    if (small) {
      counters.hits++;
      counters.bytesOut += small.length;
      res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(small.length)]);
      res.end(small);
      return;
    }
    // Larger entries: the file is opened once and sent from reused buffers (send-file.ts). The
    // size comes from the open file, so a concurrent replacement cannot make it disagree.
    let opened: OpenResult;
    try {
      opened = await openEntry(store.pathOf(key));
    } catch (err) {
      logger.error({ err, key }, 'reading an entry failed');
      sendProblem(res, 500, 'The entry could not be read; the error is logged');
      return;
    }
    if (opened.kind === 'missing') {
      // Removed between lookup and open (eviction, expiry): a miss.
      store.forget(key, info);
      counters.misses++;
      sendProblem(res, 404, `No cache entry ${key}`);
      return;
    }
    counters.hits++;
    counters.bytesOut += opened.size;
    res.writeHead(200, ['content-type', 'application/octet-stream', 'content-length', String(opened.size)]);
    try {
      await sendOpenFile(res, opened.fd, opened.size);
    } catch (err) {
      if (!res.destroyed) logger.error({ err, key }, 'sending an entry failed');
      res.destroy();
    } finally {
      closeEntry(opened.fd);
    }
  }

  async function handlePut(req: IncomingMessage, res: ServerResponse, key: string): Promise<void> {
    if (!(await checkAccess(req, res, 'readwrite'))) return;
    const max = config.maxArtifactMiB * MiB;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > max) {
      // Read the whole body before answering: a client that is still sending when the answer
      // comes and the connection closes sees a reset, not the answer (Gradle then switches its
      // remote cache off). The bytes are discarded as they arrive; the connection stays usable.
      if (await readToEnd(req)) refuseTooLarge(req, res, key, `Content-Length ${declared}`);
      return;
    }
    const { tmpPath, stream } = store.beginWrite();
    const counted = { n: 0 };
    const limit = limiter(max, counted);
    // req is piped, not passed to pipeline(): pipeline would destroy the socket on failure, and
    // the client must still receive the 413.
    const onAbort = () => {
      if (!req.complete) limit.destroy(new Error('client went away'));
    };
    req.once('close', onAbort);
    req.once('error', onAbort);
    req.pipe(limit);
    try {
      await pipeline(limit, stream);
    } catch (err) {
      req.unpipe(limit);
      await store.discard(tmpPath);
      if (err instanceof TooLarge) {
        // A body without a length (chunked) grew past the limit: as above, read the rest, then answer.
        if (await readToEnd(req)) refuseTooLarge(req, res, key, `body exceeded ${max} bytes`);
      }
      else if (res.headersSent || res.destroyed) return;
      else if (stream.errored) storageFailed(res, stream.errored);
      else sendProblem(res, 400, `The body could not be read: ${(err as Error).message}`);
      return;
    } finally {
      req.off('close', onAbort);
      req.off('error', onAbort);
    }
    let isNew: boolean;
    try {
      isNew = await store.commit(key, tmpPath, counted.n);
    } catch (err) {
      await store.discard(tmpPath);
      storageFailed(res, err as Error);
      return;
    }
    counters.writes++;
    counters.bytesIn += counted.n;
    res.writeHead(isNew ? 201 : 204);
    res.end();
  }

  async function checkUi(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const ui = config.uiAccess;
    const challenge = { 'www-authenticate': `Basic realm="${REALM}-ui", charset="UTF-8"` };
    switch (ui.type) {
      case 'disabled':
        sendProblem(res, 404, 'The node UI is disabled (uiAccess: disabled)');
        return false;
      case 'open':
        return true;
      case 'generated':
      case 'secure': {
        const creds = parseBasic(req.headers.authorization);
        if (creds === null || creds === 'malformed') {
          sendProblem(res, 401, 'The node UI needs credentials', challenge);
          return false;
        }
        let ok: boolean;
        if (ui.type === 'generated') {
          const g = generated;
          ok = g !== null && creds.username === g.username && creds.password === g.password;
        } else {
          // A wrong username costs the same check as a wrong password (a decoy).
          const outcome = await uiChecker.check(req.headers.authorization!, creds, creds.username === ui.username ? ui.password : null, clientOf(req), () => !req.socket.destroyed);
          if (outcome.kind === 'wait') {
            sendProblem(res, 429, outcome.detail, { 'retry-after': String(outcome.retryAfterSeconds) });
            return false;
          }
          ok = outcome.kind === 'ok';
        }
        if (!ok) sendProblem(res, 401, 'Wrong username or password for the node UI', challenge);
        return ok;
      }
    }
  }

  /** Cache requests are dispatched synchronously so that a hit answered from memory makes no promise. */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path.startsWith('/cache/')) {
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
          return handleGet(req, res, key, false);
        case 'HEAD':
          return handleGet(req, res, key, true);
        case 'PUT':
          return handlePut(req, res, key);
        default:
          sendProblem(res, 405, `${req.method} is not supported on cache entries`, { allow: 'GET, HEAD, PUT' });
          return undefined;
      }
    }
    return handleOther(req, res, path);
  }

  async function handleOther(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === '/ping' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if ((path === '/health/live' || path === '/health/ready') && (req.method === 'GET' || req.method === 'HEAD')) {
      // Ready: the storage directory is writable (the node cannot store entries otherwise).
      const problem = path === '/health/ready' ? await store.checkWritable() : undefined;
      if (problem !== undefined) {
        sendProblem(res, 503, `The storage directory is not writable: ${problem}`);
        return;
      }
      const body = JSON.stringify({ status: path === '/health/live' ? 'live' : 'ready' });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      // The same access as the status page it summarises.
      if (!(await checkUi(req, res))) return;
      await targetBytes().catch(() => undefined);
      const body = await metrics.metrics();
      res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if ((path === '/' || path === '/status.json') && (req.method === 'GET' || req.method === 'HEAD')) {
      if (!(await checkUi(req, res))) return;
      if (path === '/status.json') {
        await targetBytes().catch(() => undefined);
        const body = JSON.stringify(status());
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      await targetBytes().catch(() => undefined);
      const html = renderPage(status(), store, clock());
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : html);
      return;
    }
    sendProblem(res, 404, `No resource at ${req.method} ${path}`);
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
      // (The handler below checks access again; a remembered check makes that free.)
      if (req.method === 'PUT' && req.url?.startsWith('/cache/')) {
        // The client waits for 100 before sending the body; a refusal now means the body never
        // comes, so the connection cannot be reused.
        if (!(await checkAccess(req, res, 'readwrite', { connection: 'close' }))) return;
        const declared = req.headers['content-length'];
        const gradle = req.headers['x-gradle-version'];
        // A client that cannot take a 413 gets its 100 and then a 202 once the body is read.
        const takes413 = !(typeof gradle === 'string' && gradleWithout413(gradle));
        if (takes413 && declared !== undefined && Number(declared) > config.maxArtifactMiB * MiB) {
          counters.rejectedTooLarge++;
          sendProblem(res, 413, `The entry is larger than maxArtifactSize (${config.maxArtifactMiB} MiB): Content-Length ${declared}`, { connection: 'close' });
          return;
        }
      }
      res.writeContinue();
      server.emit('request', req, res);
    })().catch((err: unknown) => {
      logger.error({ err, url: req.url }, 'request failed');
      res.destroy();
    });
  });

  applyConfig(config, true);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? DEFAULT_PORT);
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url, data: store.dir, config: configFile }, 'cache node listening');

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
    applyConfig(r.config, false);
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
    store,
    config: () => config,
    generatedUiCredentials: () => generated,
    status,
    passwordChecks: () => ({
      hashes: gate.hashes,
      peakConcurrent: gate.peakActive,
      concurrency: gate.concurrency,
      refusedTooManyFailures: failures.refused,
      refusedBusy: gate.refusedBusy,
      waiting: gate.waiting,
    }),
    registrar: () => registrar,
    reload,
    async close() {
      watcher?.close();
      if (debounce) clearTimeout(debounce);
      clearInterval(flushTimer);
      clearInterval(sweepTimer);
      registrar?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.flushAccessTimes();
    },
  };
}
