// Sends an entry's file to a response without a read stream: two reused 2 MiB buffers, the next
// chunk read from disk while the current one is written to the socket.
//
// Why not createReadStream().pipe(res): every chunk of a read stream is a freshly allocated
// buffer (new memory: page faults, then garbage collection of external memory), and the stream
// machinery adds work per chunk. Reusing buffers from a small pool made a 10 MiB hit cost a
// fraction of the CPU; see docs/cache-node.md, "Performance".

import { close, fstat, open, read } from 'node:fs';
import type { ServerResponse } from 'node:http';

const CHUNK = 2 * 1024 * 1024;
/**
 * Buffers kept for reuse (16 MiB): enough for four large downloads at once without allocating.
 * 2 MiB chunks cost about a fifth less CPU per byte than 1 MiB ones in the benchmark.
 */
const POOL_MAX = 8;
const pool: Buffer[] = [];

function take(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
}

function give(b: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(b);
}

export type OpenResult = { readonly kind: 'open'; readonly fd: number; readonly size: number } | { readonly kind: 'missing' };

/** Opens the file and reads its size from the open file: a rename that replaces it later does not matter. */
export function openEntry(path: string): Promise<OpenResult> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, fd) => {
      if (err) {
        if (err.code === 'ENOENT') resolve({ kind: 'missing' });
        else reject(err);
        return;
      }
      fstat(fd, (err2, st) => {
        if (err2) {
          close(fd, () => undefined);
          reject(err2);
        } else resolve({ kind: 'open', fd, size: st.size });
      });
    });
  });
}

export function closeEntry(fd: number): void {
  close(fd, () => undefined);
}

/** A promise that may be left unawaited when the transfer stops early: its rejection is then no crash. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

function readAt(fd: number, buf: Buffer, position: number, length: number): Promise<number> {
  return quiet(
    new Promise((resolve, reject) => {
      read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n)));
    }),
  );
}

class Closed extends Error {}

/**
 * Writes `size` bytes of the open file to `res` (headers must be set; they go out with the first
 * chunk). Resolves when the last byte is handed to the socket; rejects if the client goes away or
 * the read fails (the caller destroys the response). Does not close `fd`.
 */
export async function sendOpenFile(res: ServerResponse, fd: number, size: number): Promise<void> {
  if (size === 0) {
    res.end();
    return;
  }
  let onClose!: () => void;
  const closed = quiet(
    new Promise<never>((_, reject) => {
      onClose = () => reject(new Closed('client went away'));
    }),
  );
  res.once('close', onClose);
  const write = (chunk: Buffer, last: boolean): Promise<void> => {
    const w = new Promise<void>((resolve, reject) => {
      const cb = (err?: Error | null) => (err ? reject(err) : resolve());
      if (last) res.end(chunk, cb);
      else res.write(chunk, cb);
    });
    return quiet(Promise.race([w, closed]));
  };
  const bufs = [take(), take()] as const;
  let nextRead = readAt(fd, bufs[0], 0, Math.min(CHUNK, size));
  try {
    let position = 0;
    let i = 0;
    let pendingWrite: Promise<void> = Promise.resolve();
    while (position < size) {
      const n = await Promise.race([nextRead, closed]);
      if (n === 0) throw new Error(`entry file shorter than its size (${position} of ${size} bytes)`);
      const current = bufs[i]!;
      position += n;
      // The other buffer is free once its write is done; only then is it read into again.
      await pendingWrite;
      pendingWrite = write(current.subarray(0, n), position >= size);
      i = 1 - i;
      if (position < size) nextRead = readAt(fd, bufs[i]!, position, Math.min(CHUNK, size - position));
    }
    await pendingWrite;
    // Only after a complete transfer: after a failure a write may still hold a buffer.
    give(bufs[0]);
    give(bufs[1]);
  } finally {
    res.off('close', onClose);
    // The caller closes fd next: no read may still be using it.
    await nextRead.catch(() => undefined);
  }
}
