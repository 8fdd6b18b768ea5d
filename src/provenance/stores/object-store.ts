// `obj:<name>`: an object store kept as a directory on disk, one file per envelope.

import { statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExternalServiceError } from '../errors.js';
import { fileName, idsFromNames, locationSegments, type AttestationLocation, type AttestationStore } from './store.js';

export class ObjectStore implements AttestationStore {
  readonly type = 'obj' as const;
  readonly instance: string;
  // Listing is served from memory while the folder's mtime is unchanged (a file added or removed
  // changes it); evaluation lists on every request, so this saves a readdir per store per request.
  private readonly listings = new Map<string, { mtimeMs: number; ids: readonly string[] }>();
  // Folders known to exist: one mkdir per folder, not per write (retried when one disappears).
  private readonly folders = new Set<string>();
  private sequence = 0;

  constructor(
    name: string,
    readonly directory: string,
  ) {
    this.instance = `obj:${name}`;
  }

  private folder(l: AttestationLocation): string {
    return join(this.directory, ...locationSegments(l));
  }

  /** The envelope's path inside the store (relative: server paths are not for clients). */
  describe(l: AttestationLocation, id: string): string {
    return [...locationSegments(l), fileName(id)].join('/');
  }

  private file(l: AttestationLocation, id: string): string {
    return join(this.folder(l), fileName(id));
  }

  async put(l: AttestationLocation, id: string, bytes: Uint8Array): Promise<void> {
    const dir = this.folder(l);
    // Write then rename: readers never see half an envelope.
    const tmp = join(dir, `.${id}.${process.pid}.${(this.sequence++).toString(36)}.tmp`);
    try {
      if (!this.folders.has(dir)) {
        await mkdir(dir, { recursive: true });
        this.folders.add(dir);
      }
      try {
        await writeFile(tmp, bytes);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        await mkdir(dir, { recursive: true });
        await writeFile(tmp, bytes);
      }
      await rename(tmp, join(dir, fileName(id)));
    } catch (e) {
      this.folders.delete(dir);
      throw new ExternalServiceError(`object store ${this.instance}: cannot write ${id}: ${(e as Error).message}`, { cause: e });
    }
  }

  async get(l: AttestationLocation, id: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.file(l, id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        await this.checkRoot();
        return undefined;
      }
      throw new ExternalServiceError(`object store ${this.instance}: cannot read ${id}: ${(e as Error).message}`, { cause: e });
    }
  }

  async list(l: AttestationLocation): Promise<readonly string[]> {
    const dir = this.folder(l);
    let mtimeMs: number;
    try {
      // Synchronous on purpose: this runs on every evaluation, and a stat of a folder the kernel has
      // cached costs microseconds, far less than a round trip through the thread pool.
      const st = statSync(dir, { throwIfNoEntry: false });
      if (st === undefined) {
        await this.checkRoot();
        return [];
      }
      mtimeMs = st.mtimeMs;
    } catch (e) {
      throw new ExternalServiceError(`object store ${this.instance}: ${(e as Error).message}`, { cause: e });
    }
    const cached = this.listings.get(dir);
    if (cached && cached.mtimeMs === mtimeMs) return cached.ids;
    try {
      const ids = idsFromNames(await readdir(dir));
      this.listings.set(dir, { mtimeMs, ids });
      return ids;
    } catch (e) {
      throw new ExternalServiceError(`object store ${this.instance}: ${(e as Error).message}`, { cause: e });
    }
  }

  // A missing package folder is "no attestations"; a missing store directory is a store that is down.
  private async checkRoot(): Promise<void> {
    try {
      await stat(this.directory);
    } catch (e) {
      throw new ExternalServiceError(`object store ${this.instance}: directory ${this.directory} is not available`, { cause: e });
    }
  }
}
