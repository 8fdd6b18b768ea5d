// Writes SSE text to a response, optionally through gzip, respecting socket backpressure.
//
// Messages written in one turn of the event loop are coalesced into one chunk and flushed when
// the turn ends (setImmediate) or as soon as the chunk reaches `coalesceBytes`: a client never
// waits for a buffer to fill, while a fast producer (a database page of builds) costs one socket
// write, and with gzip one compressor call, instead of one per message. With gzip every chunk is
// compressed with Z_SYNC_FLUSH, so each written message leaves the compressor byte-aligned and
// complete: a streaming gzip client can decode it before the stream ends.

import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream';
import { constants, createGzip, type Gzip, type ZlibOptions } from 'node:zlib';

export interface SinkOptions {
  readonly gzip: boolean;
  /** Coalesced text is written once it reaches this many characters (default 16 KiB). 0 writes every message at once. */
  readonly coalesceBytes?: number;
  /** gzip level 1-9 (default 6). */
  readonly gzipLevel?: number;
  /** Bytes the compressor may hold before the producer waits (default 256 KiB): lets it run ahead of zlib's thread. */
  readonly gzipBufferBytes?: number;
  /**
   * Bytes the response may buffer before the producer waits for 'drain' (default 256 KiB).
   * Above the socket's 16 KiB high-water mark, so that a fast producer does not stop for every
   * 16 KiB, and still a bound that keeps a slow client from growing the server's memory.
   */
  readonly maxBufferedBytes?: number;
}

export class SseSink {
  readonly #res: Writable;
  readonly #gzip: Gzip | undefined;
  readonly #out: Writable;
  readonly #coalesce: number;
  readonly #maxBuffered: number;
  readonly #abort = new AbortController();
  #pending = '';
  #scheduled = false;
  #ended = false;

  constructor(res: Writable, options: SinkOptions) {
    this.#res = res;
    this.#coalesce = options.coalesceBytes ?? 16 * 1024;
    this.#maxBuffered = options.maxBufferedBytes ?? 256 * 1024;
    if (options.gzip) {
      // Level 6 (default) compresses SSE (repetitive JSON) about 5-10x; Z_SYNC_FLUSH on every write
      // is what makes the stream usable live.
      // zlib streams pass their options on to Transform, which reads writableHighWaterMark.
      const gzip = createGzip({
        flush: constants.Z_SYNC_FLUSH,
        level: options.gzipLevel ?? constants.Z_DEFAULT_COMPRESSION,
        writableHighWaterMark: options.gzipBufferBytes ?? 256 * 1024,
      } as ZlibOptions);
      this.#gzip = gzip;
      this.#out = gzip;
      pipeline(gzip, res, () => this.#abort.abort());
    } else {
      this.#out = res;
    }
    res.once('close', () => this.#abort.abort());
    res.once('error', () => this.#abort.abort());
  }

  /** Aborted when the client goes away (or the response is finished): producers stop. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#abort.signal.aborted || this.#ended;
  }

  /**
   * Queues SSE text. Returns false when the caller should `await drained()` before writing more
   * (the socket, or the compressor in front of it, is full), true otherwise.
   */
  write(text: string): boolean {
    if (this.closed) return false;
    this.#pending += text;
    if (this.#pending.length >= this.#coalesce) return this.#flush();
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.#flush();
      });
    }
    return !this.#full();
  }

  /** The writer should wait: more is buffered than allowed, and a 'drain' is due. */
  #full(): boolean {
    return this.#out.writableNeedDrain && this.#out.writableLength >= this.#maxBuffered;
  }

  /** Writes what is queued now, without waiting for the end of the turn. */
  #flush(): boolean {
    if (this.#pending === '' || this.closed) return !this.#full();
    const chunk = this.#pending;
    this.#pending = '';
    this.#out.write(chunk);
    return !this.#full();
  }

  /** Resolves when the writer may continue: the buffers drained, or the client went away. */
  drained(): Promise<void> {
    if (this.closed || !this.#full()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#out.off('drain', done);
        this.#abort.signal.removeEventListener('abort', done);
        resolve();
      };
      this.#out.on('drain', done);
      this.#abort.signal.addEventListener('abort', done);
    });
  }

  /** Writes what is queued and ends the response; resolves when it is finished or closed. */
  end(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    const alreadyClosed = this.#abort.signal.aborted;
    this.#flush();
    this.#ended = true;
    if (alreadyClosed) return Promise.resolve();
    return new Promise((resolve) => {
      const res = this.#res as Writable & Partial<Pick<ServerResponse, 'writableFinished'>>;
      res.once('close', () => resolve());
      res.once('finish', () => resolve());
      this.#out.end();
    });
  }

  /** Drops the response (server shutdown or an error after the headers went out). */
  destroy(): void {
    this.#ended = true;
    this.#gzip?.destroy();
    this.#res.destroy();
    this.#abort.abort();
  }
}

/** Whether an Accept-Encoding header admits gzip (RFC 9110 §12.5.3: `gzip`, `x-gzip` or `*`, q > 0). */
export function acceptsGzip(header: string | readonly string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = typeof header === 'string' ? header : header.join(',');
  let star: boolean | undefined;
  for (const part of text.split(',')) {
    const [rawName = '', ...params] = part.split(';');
    const name = rawName.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (name === 'gzip' || name === 'x-gzip') return q > 0;
    if (name === '*') star = q > 0;
  }
  return star ?? false;
}
