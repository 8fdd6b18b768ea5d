// Registration of a node with the server: credentials from the CLI (SQLite) or the registry
// (PostgreSQL), the node reporting over real HTTP, the server showing it, wrong credentials.

import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { cacheRegistryPlugin } from '../../src/http/cache-registry-plugin.js';
import { parseConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';
import { openAuth } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import type { BuildStore } from '../../src/store/types.js';
import { CacheRegistry } from '../../src/cache-registry/registry.js';
import { REPORT_PATH } from '../../src/cache-node/registration.js';
import { createServerMetrics } from '../../src/metrics/server-metrics.js';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';
import { startTestNode } from './helpers.js';
import { CLI } from '../support/compiled-cli.js';
import { waitFor } from '../support/wait.js';

const root = join(import.meta.dirname, '../..');

interface Server {
  base: string;
  dir: string | undefined;
  app: FastifyInstance;
  database: DatabaseHandle;
  store: BuildStore;
  admin: string;
  plain: string;
  /** Node reports the server refused (401, 403), from its request metrics. */
  refusedReports(): Promise<number>;
  close(): Promise<void>;
}

async function startServer(url?: string, port = 0, dataDir?: string): Promise<Server> {
  const dir = url === undefined ? (dataDir ?? mkdtempSync(join(tmpdir(), 'bs-cache-registry-'))) : undefined;
  const config = parseConfig({ cacheNodes: { offlineAfterSeconds: 60 } }, url !== undefined ? { url } : { data: dir! });
  const database = await openDatabase(config.database);
  const logger = createLogger('cache-registry-test', 'silent');
  const store = await openBuildStore(database, { logger });
  const metrics = createServerMetrics(database, () => store.waitingForNewBuilds());
  const app = await buildApp({ config, database, store, logger }, { plugins: [cacheRegistryPlugin], metrics });
  await app.listen({ host: '127.0.0.1', port });
  const auth = await openAuth(database, config);
  await auth.users.addUser({ name: 'admin', password: 'pw-admin', permissions: ['manageCacheNodes'] });
  await auth.users.addUser({ name: 'plain', password: 'pw-plain', permissions: ['readCache'] });
  const b = (u: string) => `Basic ${Buffer.from(`${u}:pw-${u}`).toString('base64')}`;
  return {
    base: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    dir,
    app,
    database,
    store,
    admin: b('admin'),
    plain: b('plain'),
    async refusedReports() {
      const answered = await metrics.registry.getSingleMetric('buildscope_http_requests_total')!.get();
      return answered.values.filter((v) => v.labels['route'] === REPORT_PATH && ['401', '403'].includes(String(v.labels['status']))).reduce((n, v) => n + v.value, 0);
    },
    async close() {
      // Nodes of the tests may leave keep-alive connections (fetch) open: end them.
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await store.close();
      await database.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function credentialsFromCli(dir: string, name: string): { key: string; secret: string } {
  const r = spawnSync(process.execPath, [...CLI, 'cache-node', 'credentials', name, '--data', dir], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const key = /key:\s+(\S+)/.exec(r.stdout)?.[1];
  const secret = /secret:\s+(\S+)/.exec(r.stdout)?.[1];
  if (!key || !secret) throw new Error(`unexpected output: ${r.stdout}`);
  return { key, secret };
}

const variants: { name: string; url: () => Promise<string | undefined> }[] = [{ name: 'SQLite', url: async () => undefined }];
if (pgAvailable()) variants.push({ name: 'PostgreSQL', url: async () => (await createTestDatabase())!.url });

describe.each(variants)('registration ($name)', ({ name, url }) => {
  let server: Server;
  let creds: { key: string; secret: string };
  beforeAll(async () => {
    server = await startServer(await url());
    creds = server.dir ? credentialsFromCli(server.dir, 'node-1') : await (await CacheRegistry.open(server.database)).createCredentials('node-1');
  }, 60_000);
  afterAll(() => server.close());

  it('shows nodes only to principals that manage cache nodes', async () => {
    const anon = await fetch(`${server.base}/api/build-cache/nodes/node-1`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${server.base}/api/build-cache/nodes/node-1`, { headers: { authorization: server.plain } })).status).toBe(403);
    const before = await fetch(`${server.base}/api/build-cache/nodes/node-1`, { headers: { authorization: server.admin } });
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({ name: 'node-1', key: creds.key, registered: false, state: 'never-registered' });
    const unknown = await fetch(`${server.base}/api/build-cache/nodes/node-9`, { headers: { authorization: server.admin } });
    expect(unknown.status).toBe(404);
  }, 90_000);

  it('a node with the right key and secret registers and reports its status', async () => {
    const t = await startTestNode(
      { version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' } }, registration: { key: creds.key, secret: creds.secret, nodeAddress: 'http://127.0.0.1:5071', serverAddress: server.base } },
      { reportIntervalMs: 200 },
    );
    try {
      await fetch(`${t.node.url}/cache/abcdef`, { method: 'PUT', body: 'x' });
      let node: Record<string, unknown> = {};
      await waitFor(async () => {
        node = (await (await fetch(`${server.base}/api/build-cache/nodes/node-1`, { headers: { authorization: server.admin } })).json()) as Record<string, unknown>;
        return (node['status'] as { entries?: number } | null)?.entries === 1;
      }, 'the node to report one entry to the server', 60_000);
      expect(node).toMatchObject({ name: 'node-1', registered: true, state: 'online', address: 'http://127.0.0.1:5071' });
      expect(node['status']).toMatchObject({ entries: 1, writes: 1, config: { anonymousLevel: 'readwrite' } });
      expect(t.node.registrar()?.state).toMatchObject({ kind: 'registered', name: 'node-1' });
      expect(t.logs.lines.filter((l) => l.msg.includes("registered with the server as node 'node-1'"))).toHaveLength(1);
      const list = (await (await fetch(`${server.base}/api/build-cache/nodes`, { headers: { authorization: server.admin } })).json()) as { nodes: { name: string }[] };
      expect(list.nodes.map((n) => n.name)).toEqual(['node-1']);
    } finally {
      await t.close();
    }
  }, 90_000);

  it('wrong credentials are a clear logged error, logged once, and the node keeps serving', async () => {
    const t = await startTestNode(
      { version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' } }, registration: { key: creds.key, secret: 'wrong', nodeAddress: 'http://127.0.0.1:5072', serverAddress: server.base } },
      { reportIntervalMs: 100 },
    );
    try {
      await waitFor(() => t.node.registrar()?.state.kind === 'rejected', 'the registration to be rejected', 60_000);
      // The node reports again, and is refused again. It sends a report once it has handled the
      // one before, so when the server has refused four more than it had counted here, the node
      // has handled at least two refusals after the first.
      const refused = await server.refusedReports();
      await waitFor(async () => (await server.refusedReports()) >= refused + 4, 'four more refused reports', 60_000);
      const errors = t.logs.lines.filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toContain("rejected this node's key or secret (HTTP 401)");
      expect(errors[0]!.msg).toContain('buildscope cache-node credentials NAME');
      expect((await fetch(`${t.node.url}/cache/abc`, { method: 'PUT', body: 'y' })).status).toBe(201);
      expect(await (await fetch(`${t.node.url}/cache/abc`)).text()).toBe('y');
    } finally {
      await t.close();
    }
  }, 90_000);

  it('rejects malformed reports with 400 problem documents', async () => {
    const r = await fetch(`${server.base}/api/build-cache/node-status`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"key":"x"}' });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  }, 90_000);

  if (name === 'SQLite') {
    it('a node started before its server registers within seconds of the server starting', async () => {
      const probe = createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
      const port = (probe.address() as AddressInfo).port;
      await new Promise((r) => probe.close(r));
      // Credentials exist before either process starts.
      const dir = mkdtempSync(join(tmpdir(), 'bs-cache-registry-late-'));
      const db = await openDatabase({ data: dir });
      const c = await (await CacheRegistry.open(db)).createCredentials('late');
      await db.close();
      const later = await startTestNode(
        { version: 4, registration: { key: c.key, secret: c.secret, nodeAddress: 'http://127.0.0.1:5075', serverAddress: `http://127.0.0.1:${port}` } },
        // A long report interval: only the quick retry after a failure can register it in time.
        { reportIntervalMs: 600_000 },
      );
      let second: Server | undefined;
      try {
        await waitFor(() => later.node.registrar()?.state.kind === 'unreachable', 'the server to be unreachable', 60_000);
        second = await startServer(undefined, port, dir);
        await waitFor(() => later.node.registrar()?.state.kind === 'registered', 'the node to be registered', 60_000);
        const node = (await (await fetch(`${second.base}/api/build-cache/nodes/late`, { headers: { authorization: second.admin } })).json()) as Record<string, unknown>;
        expect(node).toMatchObject({ registered: true, state: 'online' });
      } finally {
        await later.close();
        await second?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);

    it('an unreachable server is logged and the node keeps serving', async () => {
      const t = await startTestNode(
        { version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' } }, registration: { key: 'k', secret: 's', nodeAddress: 'http://127.0.0.1:5073', serverAddress: 'http://127.0.0.1:9' } },
        { reportIntervalMs: 100 },
      );
      try {
        await waitFor(() => t.node.registrar()?.state.kind === 'unreachable', 'the server to be unreachable', 60_000);
        expect(t.logs.lines.find((l) => l.level === 50)?.msg).toContain('cannot reach the server');
        expect((await fetch(`${t.node.url}/cache/abc`, { method: 'PUT', body: 'z' })).status).toBe(201);
      } finally {
        await t.close();
      }
    }, 90_000);
  }

  it('refuses reports whose address is not an http(s) URL, whose status is too large or deep, or that hold NUL, storing nothing', async () => {
    const c = await (await CacheRegistry.open(server.database)).createCredentials('node-checked');
    const put = (body: unknown) =>
      fetch(`${server.base}/api/build-cache/node-status`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const good = { key: c.key, secret: c.secret, nodeAddress: 'https://cache-1.example.com:5071/', status: { entries: 1, config: { users: [{ name: 'ci' }] } } };
    let deep: unknown = 'x';
    for (let i = 0; i < 12; i++) deep = { d: deep };
    const bad: readonly [string, unknown, RegExp][] = [
      ['javascript: address', { ...good, nodeAddress: 'javascript:alert(1)' }, /http or https URL/],
      ['not a URL', { ...good, nodeAddress: 'cache-1 example' }, /http or https URL/],
      ['file: address', { ...good, nodeAddress: 'file:///etc/passwd' }, /scheme "file"/],
      ['credentials in the address', { ...good, nodeAddress: 'http://u:p@cache-1.example.com/' }, /user name or password/],
      ['100 KB status', { ...good, status: { pad: 'x'.repeat(100 * 1024) } }, /at most 65536 bytes/],
      ['deep status', { ...good, status: deep }, /8 levels/],
      ['NUL in the address', { ...good, nodeAddress: 'http://cache\u0000.example.com/' }, /NUL/],
      ['NUL in the key', { ...good, key: `${c.key}\u0000` }, /NUL/],
      ['NUL in a status value', { ...good, status: { note: 'a\u0000b' } }, /NUL/],
      ['NUL in a status member name', { ...good, status: { ['a\u0000b']: 1 } }, /NUL/],
    ];
    for (const [what, body, reason] of bad) {
      const r = await put(body);
      expect(r.status, what).toBe(400);
      expect(r.headers.get('content-type'), what).toContain('application/problem+json');
      expect(((await r.json()) as { detail: string }).detail, what).toMatch(reason);
    }
    // A 1 MB status is over the server's body limit before it is read as JSON.
    const huge = await put({ ...good, status: { pad: 'x'.repeat(1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.headers.get('content-type')).toContain('application/problem+json');
    const shown = async () => (await (await fetch(`${server.base}/api/build-cache/nodes/node-checked`, { headers: { authorization: server.admin } })).json()) as Record<string, unknown>;
    expect(await shown()).toMatchObject({ registered: false, address: null, status: null });
    expect((await put(good)).status).toBe(200);
    expect(await shown()).toMatchObject({ registered: true, address: 'https://cache-1.example.com:5071/', status: good.status });
  }, 90_000);
});
