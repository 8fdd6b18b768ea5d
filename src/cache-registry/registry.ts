// The server's side of cache node registration: credentials (key + secret, the secret stored
// only as a scrypt hash), reports from nodes, and what the server shows about each node.

import { createHash, randomBytes } from 'node:crypto';
import { migrate, type DatabaseHandle } from '../db/database.js';
import type { CacheNodeTable } from '../db/schema.js';
import { hashSecret, parseHashedSecret, verifySecret } from '../cache-node/secret.js';
import { CACHE_NODES_COMPONENT, cacheNodeMigrations } from './migrations.js';

/** Node names appear in URLs: keep them plain. */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface NodeCredentials {
  readonly name: string;
  readonly key: string;
  readonly secret: string;
}

export interface RegisteredNode {
  readonly name: string;
  readonly key: string;
  readonly createdAt: number;
  /** Whether the node has ever reported with its credentials. */
  readonly registered: boolean;
  readonly address: string | null;
  readonly registeredAt: number | null;
  readonly lastSeenAt: number | null;
  /** online: reported within `offlineAfterMs`. */
  readonly state: 'never-registered' | 'online' | 'offline';
  readonly status: unknown;
}

export interface NodeReportInput {
  readonly key: string;
  readonly secret: string;
  readonly nodeAddress: string;
  readonly status: unknown;
}

/** Largest `status` a report may carry, as JSON text (a node's `/status.json` is about 1 KB). */
export const MAX_STATUS_BYTES = 64 * 1024;
/** Deepest nesting of `status` (the node's own is 3 levels deep). */
export const MAX_STATUS_DEPTH = 8;
export const MAX_NODE_ADDRESS_LENGTH = 2000;

/**
 * Why a report cannot be stored, or undefined when it can. Checked before the credentials: the
 * server shows `nodeAddress` and `status` to administrators (an address is a link there, so only
 * http and https), and neither database may be handed a NUL character (PostgreSQL text cannot
 * hold one), so NUL is refused the same way on both.
 */
export function reportProblem(input: NodeReportInput): string | undefined {
  for (const k of ['key', 'secret', 'nodeAddress'] as const) {
    if (input[k].includes('\u0000')) return `${k} must not contain NUL characters`;
  }
  const address = input.nodeAddress;
  if (address.length > MAX_NODE_ADDRESS_LENGTH) return `nodeAddress must be at most ${MAX_NODE_ADDRESS_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `nodeAddress must be an http or https URL, got ${JSON.stringify(address.slice(0, 100))}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `nodeAddress must be an http or https URL, got scheme ${JSON.stringify(url.protocol.slice(0, -1))}`;
  if (url.hostname === '') return 'nodeAddress must name a host';
  if (url.username !== '' || url.password !== '') return 'nodeAddress must not carry a user name or password';
  if (typeof input.status !== 'object' || input.status === null || Array.isArray(input.status)) return 'status must be a JSON object';
  const nested = statusProblem(input.status, 1, 'status');
  if (nested) return nested;
  const bytes = Buffer.byteLength(JSON.stringify(input.status));
  if (bytes > MAX_STATUS_BYTES) return `status must be at most ${MAX_STATUS_BYTES} bytes as JSON, got ${bytes}`;
  return undefined;
}

function statusProblem(v: unknown, depth: number, path: string): string | undefined {
  if (typeof v === 'string') return v.includes('\u0000') ? `${path} must not contain NUL characters` : undefined;
  if (typeof v !== 'object' || v === null) return undefined;
  if (depth > MAX_STATUS_DEPTH) return `status must be nested at most ${MAX_STATUS_DEPTH} levels deep`;
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
  for (const [k, x] of entries) {
    if (k.includes('\u0000')) return `${path} has a member name with a NUL character`;
    const inner = statusProblem(x, depth + 1, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
    if (inner) return inner;
  }
  return undefined;
}

/** A row of `cache_node`, as the typed database reads it. */
type Row = CacheNodeTable;

export interface CacheRegistryOptions {
  readonly clock?: () => number;
  /** A node that has not reported for this long is shown offline (default 5 minutes). */
  readonly offlineAfterMs?: number;
}

export class CacheRegistry {
  private readonly clock: () => number;
  private readonly offlineAfterMs: number;
  /** Node key -> digest of (secret, stored hash) that passed: reports every minute skip scrypt. */
  private readonly verified = new Map<string, string>();

  private constructor(
    private readonly handle: DatabaseHandle,
    options: CacheRegistryOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.offlineAfterMs = options.offlineAfterMs ?? 5 * 60_000;
  }

  static async open(handle: DatabaseHandle, options: CacheRegistryOptions = {}): Promise<CacheRegistry> {
    await migrate(handle, CACHE_NODES_COMPONENT, cacheNodeMigrations);
    return new CacheRegistry(handle, options);
  }

  /** Creates credentials for a node, replacing (and so revoking) earlier ones of that name. */
  async createCredentials(name: string): Promise<NodeCredentials> {
    if (!NODE_NAME_PATTERN.test(name)) {
      throw new Error(`Not a node name: ${JSON.stringify(name)} (letters, digits, '.', '_', '-'; starts with a letter or digit; at most 64)`);
    }
    const key = `cn${randomBytes(10).toString('hex')}`;
    const secret = randomBytes(24).toString('base64url');
    const secretHash = await hashSecret(secret);
    const now = this.clock();
    const db = this.handle.db;
    const existing = await db.selectFrom('cache_node').select('name').where('name', '=', name).executeTakeFirst();
    if (existing) {
      await db.updateTable('cache_node').set({ node_key: key, secret_hash: secretHash, created_at: now }).where('name', '=', name).execute();
    } else {
      await db.insertInto('cache_node').values({ name, node_key: key, secret_hash: secretHash, created_at: now }).execute();
    }
    return { name, key, secret };
  }

  /** Records a node's report; returns the node's name, or null when key or secret is wrong. */
  async report(input: NodeReportInput): Promise<string | null> {
    const row = (await this.handle.db.selectFrom('cache_node').selectAll().where('node_key', '=', input.key).executeTakeFirst());
    if (!row) return null;
    // The stored hash is part of the digest, so new credentials for the node invalidate it.
    const digest = createHash('sha256').update(row.secret_hash).update('\u0000').update(input.secret).digest('base64');
    if (this.verified.get(row.node_key) !== digest) {
      const parsed = parseHashedSecret(row.secret_hash);
      if (!parsed.ok || !(await verifySecret(input.secret, parsed.value))) return null;
      if (this.verified.size >= 10_000) this.verified.clear();
      this.verified.set(row.node_key, digest);
    }
    const now = this.clock();
    await this.handle.db
      .updateTable('cache_node')
      .set({ address: input.nodeAddress, registered_at: row.registered_at ?? now, last_seen_at: now, status: JSON.stringify(input.status ?? null) })
      .where('name', '=', row.name)
      .execute();
    return row.name;
  }

  async get(name: string): Promise<RegisteredNode | undefined> {
    const row = (await this.handle.db.selectFrom('cache_node').selectAll().where('name', '=', name).executeTakeFirst());
    return row ? this.toNode(row) : undefined;
  }

  async list(): Promise<RegisteredNode[]> {
    const rows = (await this.handle.db.selectFrom('cache_node').selectAll().orderBy('name').execute());
    return rows.map((r) => this.toNode(r));
  }

  private toNode(r: Row): RegisteredNode {
    const lastSeen = r.last_seen_at === null ? null : Number(r.last_seen_at);
    return {
      name: r.name,
      key: r.node_key,
      createdAt: Number(r.created_at),
      registered: r.registered_at !== null,
      address: r.address,
      registeredAt: r.registered_at === null ? null : Number(r.registered_at),
      lastSeenAt: lastSeen,
      state: lastSeen === null ? 'never-registered' : this.clock() - lastSeen <= this.offlineAfterMs ? 'online' : 'offline',
      status: r.status === null ? null : (JSON.parse(r.status) as unknown),
    };
  }
}
