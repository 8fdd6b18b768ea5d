// Bazel's remote cache over the node's one store: content (CAS) verified against its digest as it
// is written, and action results (AC) stored only when the content they name is present. Both
// protocols (HTTP /ac/ and /cas/, and gRPC) go through here, so they share the checks, the
// target size and the eviction.
//
// Eviction and action results: an action result is checked again when it is read. If any content
// it names is gone (evicted, expired), the result is removed and the read is a miss, so a client
// is never sent an action result whose outputs it cannot download. A hit marks the content it
// names as used, so the outputs of a hit action stay as fresh as the action itself and are not
// the next to be evicted. (Evicting action results along with their content instead would need
// a reverse index from every blob to the results naming it, kept on disk across restarts.)

import { open, readFile, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DigestCounter, isEmptyBlob, SHA256_HEX, type Digest } from './digest.js';
import { decodeActionResult, decodeTree, toDigest, type ActionResultMessage } from './proto.js';
import { MiB, type NodeState } from './state.js';
import { bazelKey, type EntryInfo } from './storage.js';

export type StoreOutcome =
  | { readonly kind: 'stored'; readonly size: number }
  /** The bytes are not what the digest says; nothing was stored. */
  | { readonly kind: 'mismatch'; readonly detail: string }
  | { readonly kind: 'tooLarge'; readonly detail: string }
  /** The disk failed (full, or another error); logged. */
  | { readonly kind: 'failed'; readonly full: boolean; readonly detail: string };

export type ActionResultCheck =
  | { readonly kind: 'complete'; readonly keys: readonly string[] }
  | { readonly kind: 'missing'; readonly missing: readonly Digest[] }
  | { readonly kind: 'invalid'; readonly detail: string };

export type ActionResultLookup =
  | { readonly kind: 'hit'; readonly bytes: Buffer }
  | { readonly kind: 'miss' }
  /** Found, but naming content that is gone: removed, and to be answered as a miss. */
  | { readonly kind: 'dangling'; readonly missing: readonly Digest[] };

export function maxBytes(node: NodeState): number {
  return node.config.maxArtifactMiB * MiB;
}

export function casKey(hash: string): string {
  return bazelKey('cas', hash);
}

export function acKey(hash: string): string {
  return bazelKey('ac', hash);
}

/** Whether the content store holds the blob (the empty blob always). */
export function hasBlob(node: NodeState, d: Digest): boolean {
  if (isEmptyBlob(d)) return true;
  const info = node.store.lookup(casKey(d.hash));
  return info !== undefined && info.size === d.size;
}

/** Undefined when `d` is a SHA-256 digest this node can hold, else why not. */
export function digestFault(d: Digest): string | undefined {
  if (!SHA256_HEX.test(d.hash)) return `not a SHA-256 digest in lowercase hex: ${JSON.stringify(d.hash.slice(0, 80))}`;
  if (!Number.isSafeInteger(d.size) || d.size < 0) return `not a size: ${d.size}`;
  return undefined;
}

/**
 * A blob being written to a temporary file, hashed as it goes. Created for an HTTP PUT or a
 * ByteStream write; a ByteStream write that is interrupted keeps its writer so the client can
 * resume at `bytes`.
 */
export class BlobWriter {
  readonly counter = new DigestCounter();
  private handle: FileHandle | null = null;
  private closed = false;

  private constructor(
    private readonly node: NodeState,
    readonly expected: { readonly hash: string; readonly size: number | undefined },
    readonly tmpPath: string,
  ) {}

  static async create(node: NodeState, expected: { hash: string; size: number | undefined }): Promise<BlobWriter> {
    const w = new BlobWriter(node, expected, join(node.store.tmpDir, `${randomBytes(12).toString('hex')}.part`));
    w.handle = await open(w.tmpPath, 'wx');
    return w;
  }

  get bytes(): number {
    return this.counter.bytes;
  }

  /** Appends a chunk; a 'tooLarge' outcome (nothing more is written) when the blob grows past the limit. */
  async write(chunk: Uint8Array): Promise<StoreOutcome | undefined> {
    const limit = maxBytes(this.node);
    if (this.counter.bytes + chunk.length > limit) return { kind: 'tooLarge', detail: `The blob is larger than maxArtifactSize (${this.node.config.maxArtifactMiB} MiB)` };
    if (this.expected.size !== undefined && this.counter.bytes + chunk.length > this.expected.size) {
      return { kind: 'mismatch', detail: `the body has more than the ${this.expected.size} bytes its digest says` };
    }
    try {
      await this.handle!.write(chunk);
    } catch (err) {
      return this.diskFailed(err as Error);
    }
    this.counter.update(chunk);
    return undefined;
  }

  /** Verifies the bytes against the digest and moves the blob into the store; the writer is done. */
  async finish(): Promise<StoreOutcome> {
    await this.close();
    // A copy: an interrupted resumable write must still be able to go on hashing.
    const fault = this.counter.copy().check(this.expected.hash, this.expected.size);
    if (fault !== undefined) {
      await this.node.store.discard(this.tmpPath);
      return { kind: 'mismatch', detail: `Digest mismatch: ${fault}; nothing was stored` };
    }
    try {
      await this.node.store.commit(casKey(this.expected.hash), this.tmpPath, this.counter.bytes);
    } catch (err) {
      await this.node.store.discard(this.tmpPath);
      return this.diskFailed(err as Error);
    }
    return { kind: 'stored', size: this.counter.bytes };
  }

  /** Drops the temporary file. */
  async discard(): Promise<void> {
    await this.close();
    await this.node.store.discard(this.tmpPath);
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle?.close().catch(() => undefined);
  }

  private diskFailed(err: Error): StoreOutcome {
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
    this.node.logger.error({ err }, full ? 'the volume is full; blob not stored' : 'storing a blob failed');
    return { kind: 'failed', full, detail: full ? 'The cache volume is full; the blob was not stored' : 'The blob could not be stored; the error is logged' };
  }
}

/** Stores a blob held in memory (BatchUpdateBlobs). */
export async function putBlob(node: NodeState, d: Digest, data: Uint8Array): Promise<StoreOutcome> {
  if (data.length > maxBytes(node)) return { kind: 'tooLarge', detail: `The blob is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB)` };
  const w = await BlobWriter.create(node, { hash: d.hash, size: d.size });
  const failed = await w.write(data);
  if (failed) {
    await w.discard();
    return failed;
  }
  return w.finish();
}

/** The whole of an entry (small ones from memory); undefined when its file is gone. */
export async function readEntry(node: NodeState, key: string, info: EntryInfo): Promise<Buffer | undefined> {
  const small = node.store.memoized(key) ?? (await node.store.small(key, info));
  if (small) return small;
  try {
    return await readFile(node.store.pathOf(key));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      node.store.forget(key, info);
      return undefined;
    }
    throw err;
  }
}

/** The digests an action result names directly: its output files, output trees, stdout and stderr. */
function namedDigests(result: ActionResultMessage): { files: Digest[]; trees: Digest[] } {
  const files: Digest[] = [];
  const trees: Digest[] = [];
  for (const f of result.outputFiles ?? []) {
    const d = toDigest(f.digest);
    if (d) files.push(d);
  }
  for (const dir of result.outputDirectories ?? []) {
    const d = toDigest(dir.treeDigest);
    if (d) trees.push(d);
  }
  for (const d of [toDigest(result.stdoutDigest), toDigest(result.stderrDigest)]) {
    if (d && (d.hash !== '' || d.size !== 0)) files.push(d);
  }
  return { files, trees };
}

/**
 * Whether every blob an action result names is in the content store: its files, stdout and
 * stderr, each output directory's Tree and every file in that Tree. `keys`: the store keys of
 * those blobs (to mark them used on a hit).
 */
export async function checkActionResult(node: NodeState, bytes: Uint8Array): Promise<ActionResultCheck> {
  let result: ActionResultMessage;
  try {
    result = decodeActionResult(bytes);
  } catch (err) {
    return { kind: 'invalid', detail: `Not a serialized ActionResult: ${(err as Error).message}` };
  }
  const { files, trees } = namedDigests(result);
  const missing: Digest[] = [];
  const keys: string[] = [];
  const need = (d: Digest) => {
    const fault = digestFault(d);
    if (fault !== undefined) return fault;
    if (isEmptyBlob(d)) return undefined;
    if (hasBlob(node, d)) keys.push(casKey(d.hash));
    else missing.push(d);
    return undefined;
  };
  for (const d of [...files, ...trees]) {
    const fault = need(d);
    if (fault !== undefined) return { kind: 'invalid', detail: `The ActionResult names ${fault}` };
  }
  for (const t of trees) {
    if (isEmptyBlob(t) || !hasBlob(node, t)) continue;
    const key = casKey(t.hash);
    const info = node.store.lookup(key);
    const treeBytes = info && (await readEntry(node, key, info));
    if (!treeBytes) {
      missing.push(t);
      continue;
    }
    let tree;
    try {
      tree = decodeTree(treeBytes);
    } catch (err) {
      return { kind: 'invalid', detail: `The output directory tree ${t.hash} is not a serialized Tree: ${(err as Error).message}` };
    }
    for (const dir of [tree.root, ...(tree.children ?? [])]) {
      for (const f of dir?.files ?? []) {
        const d = toDigest(f.digest);
        if (!d) continue;
        const fault = need(d);
        if (fault !== undefined) return { kind: 'invalid', detail: `The output directory tree ${t.hash} names ${fault}` };
      }
    }
  }
  return missing.length > 0 ? { kind: 'missing', missing } : { kind: 'complete', keys };
}

/** Stores an action result once the content it names is present. */
export async function putActionResult(node: NodeState, hash: string, bytes: Buffer): Promise<StoreOutcome | ActionResultCheck> {
  if (bytes.length > maxBytes(node)) return { kind: 'tooLarge', detail: `The action result is larger than maxArtifactSize (${node.config.maxArtifactMiB} MiB)` };
  const check = await checkActionResult(node, bytes);
  if (check.kind !== 'complete') return check;
  const tmpPath = join(node.store.tmpDir, `${randomBytes(12).toString('hex')}.part`);
  try {
    const fh = await open(tmpPath, 'wx');
    try {
      await fh.writeFile(bytes);
    } finally {
      await fh.close();
    }
    await node.store.commit(acKey(hash), tmpPath, bytes.length);
  } catch (err) {
    await node.store.discard(tmpPath);
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
    node.logger.error({ err }, full ? 'the volume is full; action result not stored' : 'storing an action result failed');
    return { kind: 'failed', full, detail: full ? 'The cache volume is full; the action result was not stored' : 'The action result could not be stored; the error is logged' };
  }
  return { kind: 'stored', size: bytes.length };
}

/** An action result, checked against the content store (see the top of this file). */
export async function getActionResult(node: NodeState, hash: string): Promise<ActionResultLookup> {
  const key = acKey(hash);
  const info = node.store.lookup(key);
  if (!info) return { kind: 'miss' };
  const bytes = await readEntry(node, key, info);
  if (!bytes) return { kind: 'miss' };
  const check = await checkActionResult(node, bytes);
  switch (check.kind) {
    case 'complete':
      node.store.touch(key, info);
      for (const k of check.keys) {
        const blob = node.store.lookup(k);
        if (blob) node.store.touch(k, blob);
      }
      return { kind: 'hit', bytes };
    case 'missing':
      await node.store.remove(key);
      node.logger.info({ action: hash, missing: check.missing.length }, 'action result names evicted content; removed and answered as a miss');
      return { kind: 'dangling', missing: check.missing };
    case 'invalid':
      // Only stored after the same check passed: a file changed on disk. A miss, and gone.
      await node.store.remove(key);
      node.logger.warn({ action: hash, detail: check.detail }, 'stored action result unreadable; removed');
      return { kind: 'miss' };
  }
}
