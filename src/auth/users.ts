// Users and their access keys, in the shared database (component `auth`). Nothing here is cached
// in the process, so several server processes over one PostgreSQL database agree at all times
// (the authenticator keeps its own short-lived cache of successes, see cache.ts).

import { createHash, randomBytes } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import type { DatabaseHandle } from '../db/database.js';
import { hashPassword } from './password.js';
import { isPermission, type Permission } from './types.js';

export interface User {
  readonly name: string;
  readonly passwordHash: string | null;
  readonly permissions: readonly Permission[];
  /** Projects the user may see; null when the user is not under project-level access control. */
  readonly projects: readonly string[] | null;
  readonly createdAt: number;
}

export interface AccessKeyInfo {
  readonly user: User;
  readonly prefix: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export class UserError extends Error {
  override readonly name = 'UserError';
}

/**
 * Access keys start with this, so that they are recognisable in logs and secret scanners. Then 52
 * characters of lowercase base32 (a-z, 2-7): 260 random bits in an alphabet that every common
 * parser of keys and `host=key` lists accepts (letters and digits only: no `-`, `_` or `=`).
 */
export const ACCESS_KEY_PREFIX = 'bsk';
const ACCESS_KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const ACCESS_KEY_RANDOM_CHARS = 52;
const ACCESS_KEY_PATTERN = /^bsk[a-z2-7]{52}$/;
/** Keys made before the base32 alphabet (`bsk_` + 40 base64url characters) are still accepted. */
const LEGACY_ACCESS_KEY_PATTERN = /^bsk_[A-Za-z0-9_-]{40}$/;

export function isAccessKeyShape(s: string): boolean {
  return ACCESS_KEY_PATTERN.test(s) || LEGACY_ACCESS_KEY_PATTERN.test(s);
}

/** A new access key: the prefix and 52 random characters of the base32 alphabet. */
export function newAccessKey(): string {
  // 32 divides 256: the low five bits of a random byte pick a character without bias.
  const bytes = randomBytes(ACCESS_KEY_RANDOM_CHARS);
  let key = ACCESS_KEY_PREFIX;
  for (const b of bytes) key += ACCESS_KEY_ALPHABET[b & 31];
  return key;
}

/** Keys carry 240 (legacy) or 260 random bits, so one fast hash is enough: nobody can guess a key from its hash. */
export function hashAccessKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function checkUserName(name: string): void {
  if (!USER_NAME.test(name)) throw new UserError(`Invalid user name '${name}': use letters, digits, '.', '_', '@' or '-' (at most 128)`);
}

interface UserRow {
  name: string;
  password_hash: string | null;
  permissions: string;
  projects: string | null;
  created_at: number;
}

function toUser(r: UserRow): User {
  const perms = (JSON.parse(r.permissions) as string[]).filter(isPermission);
  return {
    name: r.name,
    passwordHash: r.password_hash,
    permissions: perms,
    projects: r.projects === null ? null : (JSON.parse(r.projects) as string[]),
    createdAt: Number(r.created_at),
  };
}

const KEY_LOOKUP_COLUMNS = ['k.prefix', 'k.created_at as key_created_at', 'k.expires_at', 'u.name', 'u.password_hash', 'u.permissions', 'u.projects', 'u.created_at'] as const;

/** The same lookup as findAccessKeyHash, as one SQLite statement prepared once (hot path: every request with a key). */
const SQLITE_KEY_LOOKUP = `SELECT k.prefix, k.created_at AS key_created_at, k.expires_at, u.name, u.password_hash, u.permissions, u.projects, u.created_at
  FROM auth_access_key k JOIN auth_user u ON u.name = k.user_name WHERE k.key_hash = ?`;

type KeyRow = UserRow & { prefix: string; key_created_at: number; expires_at: number };

function toKeyInfo(r: KeyRow): AccessKeyInfo {
  return { user: toUser(r), prefix: r.prefix, createdAt: Number(r.key_created_at), expiresAt: Number(r.expires_at) };
}

export class UserStore {
  /** Prepared on first use (the tables exist only after the auth migrations ran). */
  private keyLookup: BetterSqlite3.Statement<[string], KeyRow> | undefined;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly clock: () => number = Date.now,
  ) {}

  async addUser(input: { name: string; password?: string; permissions: readonly Permission[]; projects?: readonly string[] | null }): Promise<User> {
    checkUserName(input.name);
    for (const p of input.permissions) if (!isPermission(p)) throw new UserError(`Unknown permission '${String(p)}'`);
    if (input.password !== undefined && (input.password === '' || input.password.includes('\0'))) {
      throw new UserError('A password must not be empty or contain a NUL character');
    }
    const row: UserRow = {
      name: input.name,
      password_hash: input.password === undefined ? null : await hashPassword(input.password),
      permissions: JSON.stringify([...new Set(input.permissions)]),
      projects: input.projects == null ? null : JSON.stringify([...new Set(input.projects)]),
      created_at: this.clock(),
    };
    const inserted = await this.handle.db
      .insertInto('auth_user')
      .values(row)
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('name')
      .executeTakeFirst();
    if (!inserted) throw new UserError(`User '${input.name}' already exists`);
    return toUser(row);
  }

  async getUser(name: string): Promise<User | undefined> {
    const r = (await this.handle.db.selectFrom('auth_user').selectAll().where('name', '=', name).executeTakeFirst()) as UserRow | undefined;
    return r ? toUser(r) : undefined;
  }

  async countUsers(): Promise<number> {
    const r = await this.handle.db.selectFrom('auth_user').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return Number(r['n']);
  }

  /** Every user, by name. */
  async listUsers(): Promise<User[]> {
    const rows = (await this.handle.db.selectFrom('auth_user').selectAll().orderBy('name').execute()) as UserRow[];
    return rows.map(toUser);
  }

  /** Removes a user and, with it, every access key of the user; false when there is no such user. */
  async removeUser(name: string): Promise<boolean> {
    // Keys first: the foreign key cascades on both databases, but say so rather than rely on a pragma.
    return this.handle.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('auth_access_key').where('user_name', '=', name).execute();
      const r = await tx.deleteFrom('auth_user').where('name', '=', name).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  /** Replaces a user's password (access keys stay valid). */
  async setPassword(name: string, password: string): Promise<void> {
    if (password === '' || password.includes('\0')) throw new UserError('A password must not be empty or contain a NUL character');
    const hash = await hashPassword(password);
    const r = await this.handle.db.updateTable('auth_user').set({ password_hash: hash }).where('name', '=', name).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new UserError(`No user '${name}'`);
  }

  /** The access keys (never the keys themselves: their first characters), of one user or of all, oldest first. */
  async listAccessKeys(userName?: string): Promise<{ user: string; prefix: string; createdAt: number; expiresAt: number }[]> {
    let q = this.handle.db.selectFrom('auth_access_key').select(['user_name', 'prefix', 'created_at', 'expires_at']);
    if (userName !== undefined) q = q.where('user_name', '=', userName);
    const rows = (await q.orderBy('created_at').orderBy('prefix').execute()) as { user_name: string; prefix: string; created_at: number; expires_at: number }[];
    return rows.map((r) => ({ user: r.user_name, prefix: r.prefix, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) }));
  }

  /**
   * Revokes one access key, named by the key itself or by the first characters that listAccessKeys
   * shows (optionally only among one user's keys). A prefix that names several keys revokes none
   * and says so. Returns the revoked key's user and prefix.
   */
  async revokeAccessKey(keyOrPrefix: string, userName?: string): Promise<{ user: string; prefix: string }> {
    const exact = await this.findAccessKey([keyOrPrefix]);
    if (exact && (userName === undefined || exact.user.name === userName)) {
      await this.handle.db.deleteFrom('auth_access_key').where('key_hash', '=', hashAccessKey(keyOrPrefix)).execute();
      return { user: exact.user.name, prefix: exact.prefix };
    }
    let q = this.handle.db.selectFrom('auth_access_key').select(['key_hash', 'user_name', 'prefix']).where('prefix', '=', keyOrPrefix);
    if (userName !== undefined) q = q.where('user_name', '=', userName);
    const matches = await q.execute();
    if (matches.length === 0) throw new UserError(`No access key ${keyOrPrefix}${userName !== undefined ? ` of user '${userName}'` : ''}`);
    if (matches.length > 1) {
      throw new UserError(`${matches.length} access keys start with ${keyOrPrefix} (users ${[...new Set(matches.map((m) => m.user_name))].join(', ')}): give the whole key, or --user`);
    }
    const [m] = matches;
    await this.handle.db.deleteFrom('auth_access_key').where('key_hash', '=', m!.key_hash).execute();
    return { user: m!.user_name, prefix: m!.prefix };
  }

  /** Creates an access key for a user; the key itself is returned once and never stored. */
  async createAccessKey(userName: string, options: { expiresAt: number }): Promise<{ key: string; expiresAt: number }> {
    const user = await this.getUser(userName);
    if (!user) throw new UserError(`No user '${userName}'`);
    const key = newAccessKey();
    await this.handle.db
      .insertInto('auth_access_key')
      .values({
        key_hash: hashAccessKey(key),
        user_name: userName,
        prefix: key.slice(0, 8),
        created_at: this.clock(),
        expires_at: options.expiresAt,
      })
      .execute();
    return { key, expiresAt: options.expiresAt };
  }

  /** The key (whichever of the candidates exists) and its user; expired keys are returned too. */
  async findAccessKey(candidates: readonly string[]): Promise<AccessKeyInfo | undefined> {
    if (candidates.length === 0) return undefined;
    const r = await this.handle.db
      .selectFrom('auth_access_key as k')
      .innerJoin('auth_user as u', 'u.name', 'k.user_name')
      .select([...KEY_LOOKUP_COLUMNS])
      .where('k.key_hash', 'in', candidates.map(hashAccessKey))
      .executeTakeFirst();
    return r ? toKeyInfo(r as KeyRow) : undefined;
  }

  /** The key with this hash (hashAccessKey) and its user; expired keys are returned too. */
  async findAccessKeyHash(keyHash: string): Promise<AccessKeyInfo | undefined> {
    const sqlite = this.handle.sqlite;
    if (sqlite !== undefined) {
      this.keyLookup ??= sqlite.prepare<[string], KeyRow>(SQLITE_KEY_LOOKUP);
      const r = this.keyLookup.get(keyHash);
      return r ? toKeyInfo(r) : undefined;
    }
    const r = await this.handle.db
      .selectFrom('auth_access_key as k')
      .innerJoin('auth_user as u', 'u.name', 'k.user_name')
      .select([...KEY_LOOKUP_COLUMNS])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    return r ? toKeyInfo(r as KeyRow) : undefined;
  }
}
