// Real servers for the provenance tests: the test server (test/support/server.ts) with the
// provenance plugin over SQLite in a temp dir, and nginx from Debian with WebDAV PUT as the artifact
// repository, started on a free loopback port with its own config in a temp dir.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../../src/db/database.js';
import { provenancePlugin } from '../../src/http/provenance-plugin.js';
import type { Auth, Permission } from '../../src/auth/index.js';
import { createLogger } from '../../src/log.js';
import type { BuildStore } from '../../src/store/types.js';
import { buildLine as lineOf } from '../support/lines.js';
import { freePort } from '../support/ports.js';
import { startTestServer } from '../support/server.js';
import { waitFor } from '../support/wait.js';

export { freePort };

export const logger = createLogger('provenance-test', 'silent');

/** Whether something accepts connections on the port now. */
function listens(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

export function nginxBinary(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(p)) return p;
  const r = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

export interface Nginx {
  readonly url: string;
  readonly root: string;
  stop(): Promise<void>;
}

/** nginx serving `root` with WebDAV PUT (create_full_put_path) and JSON directory listings. */
export async function startNginx(): Promise<Nginx> {
  const bin = nginxBinary();
  if (!bin) throw new Error('nginx is not installed (apt-get install nginx)');
  const dir = mkdtempSync(join(tmpdir(), 'bs-nginx-'));
  const root = join(dir, 'repo');
  mkdirSync(root);
  for (const t of ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
  const port = await freePort();
  // As root the workers would switch to `nobody` and could not write the temp root.
  const user = process.getuid?.() === 0 ? 'user root root;' : '';
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${user}
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    client_max_body_size 10m;
    location / {
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
      autoindex on;
      autoindex_format json;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  await waitFor(() => listens(port), `nginx listening on port ${port}`, 10_000, 50);
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}/attestations`,
    root,
    async stop() {
      if (stopped) return;
      stopped = true;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ProvenanceServer {
  readonly url: string;
  readonly dir: string;
  readonly app: FastifyInstance;
  readonly store: BuildStore;
  readonly database: DatabaseHandle;
  readonly auth: Auth;
  /** A user with a password (`pw-<name>`) and an access key; returns Authorization header values. */
  user(name: string, permissions: readonly Permission[], projects?: readonly string[] | null): Promise<{ bearer: string; basic: string; key: string }>;
  close(): Promise<void>;
}

/** The test server (test/support/server.ts) with the provenance plugin; `provenance` is the config section. */
export async function startProvenanceServer(provenance: (dir: string) => unknown, options: { url?: string } = {}): Promise<ProvenanceServer> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-prov-'));
  const cleanup = async () => rmSync(dir, { recursive: true, force: true });
  const location = options.url !== undefined ? { dialect: 'postgres' as const, url: options.url, cleanup } : { dialect: 'sqlite' as const, data: dir, cleanup };
  const s = await startTestServer(location, { plugins: [provenancePlugin], raw: { provenance: provenance(dir) }, logger, storeClock: Date.now });
  return {
    url: s.url,
    dir,
    app: s.app,
    store: s.store,
    database: s.database,
    auth: s.auth,
    async user(name, permissions, projects = null) {
      const c = await s.credentials(name, permissions, { projects, password: `pw-${name}`, keyExpiresAt: Date.now() + 86_400_000 });
      return { key: c.key, bearer: c.bearer, basic: c.basic };
    },
    close: () => s.close(),
  };
}

/** One build as an NDJSON ingest line (a jvmbuild of the project inventory unless told otherwise). */
export function buildLine(
  id: string,
  options: { toolType?: string; toolVersion?: string; agentVersion?: string; project?: string; values?: Record<string, string>; tags?: string[]; start?: number } = {},
): string {
  return lineOf({
    id,
    tool: options.toolType ?? 'jvmbuild',
    toolVersion: options.toolVersion ?? '8.10.2',
    agentVersion: options.agentVersion ?? '3.19.2',
    project: options.project ?? 'inventory',
    start: options.start ?? 1_790_000_000_000,
    hostname: 'build-01.ci.example.com',
    localHostname: 'host-1',
    ...(options.values !== undefined ? { values: options.values } : {}),
    ...(options.tags !== undefined ? { tags: options.tags } : {}),
  });
}

/** Sends a request and returns status, headers and parsed body (JSON, NDJSON lines or text). */
export async function call(
  method: string,
  url: string,
  options: { auth?: string; json?: unknown; form?: Record<string, string | string[]>; multipart?: Record<string, string | string[]>; accept?: string } = {},
): Promise<{ status: number; type: string; body: any; text: string; headers: Headers }> {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json, application/problem+json' };
  if (options.auth) headers['authorization'] = options.auth;
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(options.form)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
    body = p.toString();
  } else if (options.multipart) {
    const f = new FormData();
    for (const [k, v] of Object.entries(options.multipart)) for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
    body = f;
  }
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (type.startsWith('application/x-ndjson')) parsed = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
  else if (type.includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, type, body: parsed, text, headers: res.headers };
}
