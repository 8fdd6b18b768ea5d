// The SSE sink over a real HTTP server on 127.0.0.1: coalescing, gzip flushing, backpressure.
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGunzip } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { SseSink } from '../../src/export/sink.js';
import { formatMessage } from '../../src/export/sse.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function serve(handler: (res: ServerResponse) => void): Promise<number> {
  server = createServer((_req, res) => handler(res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function request(port: number, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => get({ host: '127.0.0.1', port, path: '/', headers }, resolve).on('error', reject));
}

const msg = (i: number): string => formatMessage({ id: String(i), event: 'Build', data: JSON.stringify({ i, pad: 'x'.repeat(100) }) });

describe('SseSink', () => {
  for (const gzip of [false, true]) {
    it(`delivers a message before the stream ends (gzip ${gzip})`, async () => {
      let sink: SseSink | undefined;
      const port = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
        sink = new SseSink(res, { gzip });
        sink.write(msg(1));
        // The stream stays open: the client must get message 1 without waiting for more.
      });
      const res = await request(port);
      const body = gzip ? res.pipe(createGunzip()) : res;
      const first = await new Promise<string>((resolve) => {
        let text = '';
        body.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.endsWith('\n\n')) resolve(text);
        });
      });
      expect(first).toBe(msg(1));
      expect(sink!.closed).toBe(false);
      await sink!.end();
    });
  }

  it('coalesces messages written in one turn and writes them in order', async () => {
    const port = await serve((res) => {
      res.writeHead(200);
      const sink = new SseSink(res, { gzip: true });
      for (let i = 1; i <= 1000; i++) sink.write(msg(i));
      void sink.end();
    });
    const res = await request(port);
    const chunks: Buffer[] = [];
    for await (const c of res.pipe(createGunzip())) chunks.push(c as Buffer);
    const expected = Array.from({ length: 1000 }, (_, i) => msg(i + 1)).join('');
    expect(Buffer.concat(chunks).toString()).toBe(expected);
  });

  for (const gzip of [false, true]) {
    it(`respects backpressure: a paused client bounds what the server buffers (gzip ${gzip})`, async () => {
      let maxBuffered = 0;
      let written = 0;
      /** The producer waits for the socket to take what it wrote (sink.drained()). */
      let parked = false;
      let done!: () => void;
      const finished = new Promise<void>((r) => (done = r));
      const port = await serve((res) => {
        res.writeHead(200);
        const sink = new SseSink(res, { gzip });
        void (async () => {
          // 40 MB of messages through a client that reads nothing for a while.
          for (let i = 0; i < 200_000 && !sink.closed; i++) {
            written++;
            if (!sink.write(msg(i) + 'y'.repeat(i % 97))) {
              parked = true;
              await sink.drained();
              parked = false;
            }
            maxBuffered = Math.max(maxBuffered, res.writableLength);
          }
          await sink.end();
          done();
        })();
      });
      const res = await request(port);
      res.pause();
      // Until the client holds as much as it reads ahead (its parser stops reading the socket)
      // and the producer waits for the socket: then it is stuck, far from done.
      await expect.poll(() => parked && res.readableLength >= res.readableHighWaterMark, { timeout: 60_000, interval: 10 }).toBe(true);
      expect(written).toBeLessThan(200_000);
      let bytes = 0;
      const body = gzip ? res.pipe(createGunzip()) : res;
      body.on('data', (c: Buffer) => (bytes += c.length));
      res.resume();
      await finished;
      await new Promise((r) => body.once('end', r));
      expect(written).toBe(200_000);
      expect(bytes).toBeGreaterThan(200_000 * 100);
      expect(maxBuffered).toBeLessThan(4 * 1024 * 1024);
    });
  }

  it('aborts its signal when the client goes away', async () => {
    let sink: SseSink | undefined;
    const port = await serve((res) => {
      res.writeHead(200);
      sink = new SseSink(res, { gzip: true });
      sink.write(msg(1));
    });
    const res = await request(port);
    await new Promise((r) => res.once('data', r));
    res.destroy();
    await new Promise((r) => sink!.signal.addEventListener('abort', r));
    expect(sink!.closed).toBe(true);
    expect(sink!.write(msg(2))).toBe(false);
    await sink!.drained();
  });
});
