// A small bounded cache of successful authentications, so that repeated requests with the same
// credential skip the database lookup, the JWT signature check or the scrypt password check.
//
// Keys are never credentials: callers pass a SHA-256 of an access key or token, or a keyed hash of
// user and password. Only successes are cached (a wrong or unknown credential pays the full price
// every time). An entry lives at most `ttlMs` (so a revoked key or a changed password keeps
// working for up to that long in one process) and is never served at or past its credential's
// own `expiresAt`. Least recently used entries are dropped beyond `maxEntries`.

import { LRUCache } from 'lru-cache';
import type { Principal } from './types.js';

export interface AuthCacheOptions {
  /** How long a successful authentication is reused, in ms; 0 disables the cache. Default 5000. */
  readonly ttlMs?: number;
  /** At most this many credentials are remembered (least recently used dropped). Default 10000. */
  readonly maxEntries?: number;
}

export const DEFAULT_AUTH_CACHE_TTL_MS = 5000;
export const DEFAULT_AUTH_CACHE_ENTRIES = 10_000;

interface Entry {
  readonly principal: Principal;
  /** Epoch ms: reusable while now < until (the earlier of TTL end and credential expiry). */
  readonly until: number;
}

export class AuthCache {
  // lru-cache keeps the recency order and the bound; the lifetime is checked here against our own
  // clock, because lru-cache's TTL serves an entry at the instant it ends (and reads a start time
  // of 0 as "no TTL"), and a credential must not be served at or past its `until`.
  private readonly entries: LRUCache<string, Entry> | undefined;
  readonly ttlMs: number;
  readonly maxEntries: number;

  constructor(
    options: AuthCacheOptions = {},
    private readonly clock: () => number = Date.now,
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_AUTH_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? DEFAULT_AUTH_CACHE_ENTRIES;
    if (!(this.ttlMs >= 0) || !Number.isInteger(this.maxEntries) || this.maxEntries < 0) {
      throw new Error(`Invalid auth cache options: ttlMs ${this.ttlMs}, maxEntries ${this.maxEntries}`);
    }
    if (this.ttlMs > 0 && this.maxEntries > 0) this.entries = new LRUCache<string, Entry>({ max: this.maxEntries });
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get(key: string): Principal | undefined {
    const entry = this.entries?.get(key);
    if (entry === undefined) return undefined;
    if (this.clock() >= entry.until) {
      this.entries!.delete(key);
      return undefined;
    }
    return entry.principal;
  }

  set(key: string, principal: Principal): void {
    if (this.entries === undefined) return;
    const now = this.clock();
    const until = Math.min(now + this.ttlMs, principal.expiresAt ?? Infinity);
    // Whatever was remembered for this key is superseded, even when the new principal is not kept.
    this.entries.delete(key);
    if (until > now) this.entries.set(key, { principal, until });
  }

  clear(): void {
    this.entries?.clear();
  }
}
