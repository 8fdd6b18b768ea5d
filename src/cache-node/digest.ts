// Content digests of Bazel's remote cache: SHA-256 in lowercase hex with the size in bytes, and
// the streaming check that a body is what its digest says.

import { createHash, type Hash } from 'node:crypto';

export interface Digest {
  readonly hash: string;
  readonly size: number;
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/**
 * The empty blob is present whatever the store holds: the Remote Execution API lets clients rely
 * on it without uploading it, and Bazel never uploads it.
 */
export function isEmptyBlob(d: Digest): boolean {
  return d.size === 0 && d.hash === EMPTY_SHA256;
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Hashes and counts bytes as they pass; `check` compares the result with an expected digest. */
export class DigestCounter {
  bytes = 0;

  constructor(private readonly hash: Hash = createHash('sha256')) {}

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
  }

  /** A copy that can go on hashing separately (a resumable upload keeps one per committed offset). */
  copy(): DigestCounter {
    const c = new DigestCounter(this.hash.copy());
    c.bytes = this.bytes;
    return c;
  }

  /** Undefined when the bytes match `expected` (size too, unless `size` is undefined), else why not. */
  check(expectedHash: string, expectedSize: number | undefined): string | undefined {
    if (expectedSize !== undefined && this.bytes !== expectedSize) return `the body has ${this.bytes} bytes, the digest says ${expectedSize}`;
    const actual = this.hash.digest('hex');
    if (actual !== expectedHash) return `the body's SHA-256 is ${actual}, not ${expectedHash}`;
    return undefined;
  }
}
