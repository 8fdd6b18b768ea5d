// Disk storage of cache entries: one file per entry under <data>/entries/<2-char fan-out>/<key>.
//
// - Writes go to <data>/tmp/<random> and are renamed into place: a reader sees a whole entry or
//   none; two writers of one key each write their own temporary file and the last rename wins.
// - The index (size, creation and last access per key, in least-recently-used order) lives in
//   memory and is rebuilt from the directory on start, so it survives a restart and a kill -9:
//   a file exists only once its rename is done. Creation time is the file's mtime; last access
//   is its atime, written back in batches (a kill -9 can lose the last few seconds of LRU order,
//   never an entry).
// - Small entries are also kept in memory (bounded) so that hits on them cost no file system
//   call at all.
// - Bazel's action cache and content store share the index, the target size and the eviction:
//   their keys are `ac/<sha256>` and `cas/<sha256>` (a `/` no Gradle key can contain), stored
//   under <data>/ac/ and <data>/cas/ with the same fan-out.

import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, statfs, unlink, utimes, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from '../log.js';

export interface EntryInfo {
  readonly size: number;
  /** Epoch ms at which the entry was stored. */
  readonly createdAt: number;
  lastAccess: number;
}

export interface StoreOptions {
  readonly clock?: () => number;
  readonly logger?: Logger;
  /** Entries up to this size are also kept in memory (default 64 KiB). */
  readonly memoEntryBytes?: number;
  /** Total memory for small entries (default 64 MiB). */
  readonly memoTotalBytes?: number;
}

export interface StoreLimits {
  /** null: no age limit. */
  readonly maxEntryAgeMs: number | null;
  /** Computes the target size in bytes; may look at the volume. */
  readonly targetBytes: (store: DiskStore) => Promise<number>;
}

/** Keys as build tools send them (hex digests); anything that could escape the directory is refused. */
export const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

/** The two namespaces of Bazel's remote cache: action results, and content by its SHA-256. */
export type Namespace = 'ac' | 'cas';
export const NAMESPACES: readonly Namespace[] = ['ac', 'cas'];
const SHA256_NAME = /^[0-9a-f]{64}$/;

/** The store key of a Bazel entry; `hash` must be 64 lowercase hex digits (checked by the caller). */
export function bazelKey(namespace: Namespace, hash: string): string {
  return `${namespace}/${hash}`;
}

/** Which part of the cache a store key belongs to. */
export function namespaceOf(key: string): Namespace | 'cache' {
  if (key.startsWith('ac/')) return 'ac';
  if (key.startsWith('cas/')) return 'cas';
  return 'cache';
}

export class DiskStore {
  readonly entriesDir: string;
  readonly tmpDir: string;
  private readonly index = new Map<string, EntryInfo>();
  private readonly memo = new Map<string, Buffer>();
  private readonly reading = new Map<string, { readonly info: EntryInfo; readonly read: Promise<Buffer | undefined> }>();
  private memoBytes = 0;
  private totalBytes = 0;
  private readonly dirtyAccess = new Set<string>();
  private readonly commitChains = new Map<string, Promise<unknown>>();
  private readonly clock: () => number;
  private readonly memoEntryBytes: number;
  private readonly memoTotalBytes: number;
  private limits: StoreLimits = { maxEntryAgeMs: null, targetBytes: async () => Number.POSITIVE_INFINITY };
  private evicting: Promise<void> | null = null;
  private evictAgain = false;
  evictedCount = 0;
  expiredCount = 0;
  /** Evictions per part of the cache (Gradle/Maven entries, action results, content). */
  readonly evictedBy: Record<Namespace | 'cache', number> = { cache: 0, ac: 0, cas: 0 };

  private constructor(
    readonly dir: string,
    private readonly options: StoreOptions,
  ) {
    this.entriesDir = join(dir, 'entries');
    this.tmpDir = join(dir, 'tmp');
    this.clock = options.clock ?? Date.now;
    this.memoEntryBytes = options.memoEntryBytes ?? 64 * 1024;
    this.memoTotalBytes = options.memoTotalBytes ?? 64 * 1024 * 1024;
  }

  static async open(dir: string, options: StoreOptions = {}): Promise<DiskStore> {
    const store = new DiskStore(dir, options);
    await store.rebuild();
    return store;
  }

  /** Reads the directory back into the index; leftovers of interrupted writes are removed. */
  private async rebuild(): Promise<void> {
    await rm(this.tmpDir, { recursive: true, force: true });
    await mkdir(this.tmpDir, { recursive: true });
    await mkdir(this.entriesDir, { recursive: true });
    const found: [string, EntryInfo][] = [];
    const scan = async (top: string, pattern: RegExp, keyOf: (name: string) => string) => {
      await mkdir(top, { recursive: true });
      for (const fan of await readdir(top)) {
        const fanDir = join(top, fan);
        let names: string[];
        try {
          names = await readdir(fanDir);
        } catch {
          continue;
        }
        for (const name of names) {
          if (!pattern.test(name)) continue;
          try {
            const s = await stat(join(fanDir, name));
            if (!s.isFile()) continue;
            found.push([keyOf(name), { size: s.size, createdAt: s.mtimeMs, lastAccess: Math.max(s.atimeMs, s.mtimeMs) }]);
          } catch {
            // Removed while we looked: not an entry.
          }
        }
      }
    };
    await scan(this.entriesDir, KEY_PATTERN, (name) => name);
    for (const ns of NAMESPACES) await scan(join(this.dir, ns), SHA256_NAME, (name) => bazelKey(ns, name));
    found.sort((a, b) => a[1].lastAccess - b[1].lastAccess);
    for (const [k, info] of found) {
      this.index.set(k, info);
      this.totalBytes += info.size;
    }
    this.options.logger?.info({ entries: this.index.size, bytes: this.totalBytes, dir: this.dir }, 'cache index rebuilt from disk');
  }

  setLimits(limits: StoreLimits): void {
    this.limits = limits;
  }

  get size(): number {
    return this.index.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  pathOf(key: string): string {
    const ns = namespaceOf(key);
    if (ns === 'cache') return join(this.entriesDir, key.slice(0, 2).padEnd(2, '_'), key);
    const hash = key.slice(ns.length + 1);
    return join(this.dir, ns, hash.slice(0, 2), hash);
  }

  /** Whether the key is held (no expiry check, no LRU move): FindMissingBlobs and AC checks. */
  has(key: string): boolean {
    return this.lookup(key) !== undefined;
  }

  /** The entry, or undefined on a miss (an expired entry is removed and is a miss). */
  lookup(key: string): EntryInfo | undefined {
    const info = this.index.get(key);
    if (!info) return undefined;
    const now = this.clock();
    if (this.limits.maxEntryAgeMs !== null && now - info.createdAt > this.limits.maxEntryAgeMs) {
      this.expiredCount++;
      void this.remove(key);
      return undefined;
    }
    return info;
  }

  /** Marks an entry used: it moves to the most recently used end. */
  touch(key: string, info: EntryInfo): void {
    info.lastAccess = this.clock();
    this.index.delete(key);
    this.index.set(key, info);
    this.dirtyAccess.add(key);
  }

  /** The entry's bytes if they are already held in memory. */
  memoized(key: string): Buffer | undefined {
    const m = this.memo.get(key);
    if (m) {
      // Most recently used last: the memory for small entries gives up its least recently used.
      this.memo.delete(key);
      this.memo.set(key, m);
    }
    return m;
  }

  /** The entry's bytes when it is small enough to be held in memory (read once, then kept). */
  small(key: string, info: EntryInfo): Promise<Buffer | undefined> {
    if (info.size > this.memoEntryBytes) return Promise.resolve(undefined);
    const cached = this.memo.get(key);
    if (cached) return Promise.resolve(cached);
    // Concurrent first hits on one entry share one read (a cold cache under load: one read per
    // entry, not one per request).
    const reading = this.reading.get(key);
    if (reading && reading.info === info) return reading.read;
    const read = this.readSmall(key, info).finally(() => {
      if (this.reading.get(key)?.read === read) this.reading.delete(key);
    });
    this.reading.set(key, { info, read });
    return read;
  }

  private async readSmall(key: string, info: EntryInfo): Promise<Buffer | undefined> {
    let buf: Buffer;
    try {
      buf = await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.forget(key, info);
      return undefined;
    }
    // The entry may have been replaced or removed while we read.
    if (this.index.get(key) !== info || buf.length !== info.size) return buf;
    this.memo.set(key, buf);
    this.memoBytes += buf.length;
    while (this.memoBytes > this.memoTotalBytes) {
      const oldest = this.memo.keys().next().value as string;
      this.dropMemo(oldest);
    }
    return buf;
  }

  /**
   * Drops an index entry whose file turned out to be missing (an eviction's unlink can meet a
   * concurrent re-upload of the same key); the next upload of the key stores it again.
   */
  forget(key: string, info: EntryInfo): void {
    if (this.index.get(key) !== info) return;
    this.index.delete(key);
    this.totalBytes -= info.size;
    this.dropMemo(key);
  }

  /** A temporary file to write a new entry into; commit() or discard() it. */
  beginWrite(): { readonly tmpPath: string; readonly stream: WriteStream } {
    const tmpPath = join(this.tmpDir, `${randomBytes(12).toString('hex')}.part`);
    return { tmpPath, stream: createWriteStream(tmpPath, { flags: 'wx', highWaterMark: 1024 * 1024 }) };
  }

  async discard(tmpPath: string): Promise<void> {
    await unlink(tmpPath).catch(() => undefined);
  }

  /**
   * Moves a finished temporary file into place. Commits of one key run one after another so the
   * index always describes the file that won the last rename. Returns whether the key was new.
   */
  commit(key: string, tmpPath: string, size: number): Promise<boolean> {
    const previous = this.commitChains.get(key) ?? Promise.resolve();
    const run = previous.then(async () => {
      const now = this.clock();
      const target = this.pathOf(key);
      const when = new Date(now);
      await utimes(tmpPath, when, when);
      await mkdir(join(target, '..'), { recursive: true });
      await rename(tmpPath, target);
      const old = this.index.get(key);
      if (old) this.totalBytes -= old.size;
      this.dropMemo(key);
      this.index.delete(key);
      this.index.set(key, { size, createdAt: now, lastAccess: now });
      this.totalBytes += size;
      return old === undefined;
    });
    const settled = run.catch(() => undefined);
    this.commitChains.set(key, settled);
    void settled.then(() => {
      if (this.commitChains.get(key) === settled) this.commitChains.delete(key);
    });
    return run.then((isNew) => {
      this.scheduleEviction();
      return isNew;
    });
  }

  async remove(key: string): Promise<void> {
    const info = this.index.get(key);
    if (!info) return;
    this.index.delete(key);
    this.totalBytes -= info.size;
    this.dropMemo(key);
    this.dirtyAccess.delete(key);
    await unlink(this.pathOf(key)).catch(() => undefined);
  }

  private dropMemo(key: string): void {
    const m = this.memo.get(key);
    if (m) {
      this.memo.delete(key);
      this.memoBytes -= m.length;
    }
  }

  /** Runs eviction soon; calls while one runs fold into one more pass. */
  scheduleEviction(): Promise<void> {
    if (this.evicting) {
      this.evictAgain = true;
      return this.evicting;
    }
    this.evicting = (async () => {
      do {
        this.evictAgain = false;
        await this.enforceLimits();
      } while (this.evictAgain);
    })()
      .catch((err: unknown) => this.options.logger?.error({ err }, 'eviction failed'))
      .finally(() => {
        this.evicting = null;
      });
    return this.evicting;
  }

  /** Expires old entries, then removes least recently used ones until the cache fits its target. */
  async enforceLimits(): Promise<void> {
    const maxAge = this.limits.maxEntryAgeMs;
    if (maxAge !== null) {
      const now = this.clock();
      const old = [...this.index].filter(([, info]) => now - info.createdAt > maxAge).map(([k]) => k);
      for (const k of old) {
        this.expiredCount++;
        await this.remove(k);
      }
    }
    const target = await this.limits.targetBytes(this);
    while (this.totalBytes > target && this.index.size > 0) {
      const lru = this.index.keys().next().value as string;
      this.evictedCount++;
      this.evictedBy[namespaceOf(lru)]++;
      await this.remove(lru);
    }
  }

  /** Writes batched last-access times back to the files (their atime). */
  async flushAccessTimes(): Promise<void> {
    const keys = [...this.dirtyAccess];
    this.dirtyAccess.clear();
    for (const k of keys) {
      const info = this.index.get(k);
      if (!info) continue;
      await utimes(this.pathOf(k), new Date(info.lastAccess), new Date(info.createdAt)).catch(() => undefined);
    }
  }

  /** The most recently used entries first, for the UI. */
  recent(limit: number): { key: string; info: EntryInfo }[] {
    const all = [...this.index];
    return all
      .slice(Math.max(0, all.length - limit))
      .reverse()
      .map(([key, info]) => ({ key, info }));
  }

  /**
   * Undefined when new entries can be written, else why not: a probe file is written to and
   * removed from the temporary directory, as a PUT would (a permission check alone says yes to
   * root whatever the directory has become).
   */
  async checkWritable(): Promise<string | undefined> {
    const probe = join(this.tmpDir, `.ready-${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(probe, '');
      await unlink(probe);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  /** Capacity and free space of the volume holding the data directory, in bytes. */
  async volume(): Promise<{ capacity: number; free: number }> {
    const s = await statfs(this.dir);
    return { capacity: s.blocks * s.bsize, free: s.bavail * s.bsize };
  }
}
