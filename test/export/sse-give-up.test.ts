// readSse's time bound (mirror --give-up-after): an unreachable source ends with a clear error
// within the bound; a long-lived quiet stream that drops is resumed, not given up.

import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ExportUnreachableError, readSse } from '../../src/mirror/sse-client.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function listen(s: Server): Promise<string> {
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/stream`;
}

describe('readSse with giveUpAfterMs', () => {
  it('a refused connection ends with ExportUnreachableError naming the reason', async () => {
    const probe = createNetServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((ok) => probe.close(() => ok()));
    const read = async (): Promise<void> => {
      for await (const _ of readSse(`http://127.0.0.1:${port}/x`, { giveUpAfterMs: 500, retryDelayMs: 20 })) void _;
    };
    const error = await read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportUnreachableError);
    expect((error as Error).message).toBe(`cannot reach http://127.0.0.1:${port}/x: connection refused (gave up after 1 s)`);
  });

  it('a stream that was quiet for longer than the bound and then dropped is resumed', async () => {
    let requests = 0;
    server = createServer((req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (requests === 1) {
        res.write('id: 1\ndata: first\n\n');
        // Quiet for longer than the bound, then the connection breaks.
        setTimeout(() => res.destroy(), 600);
      } else {
        expect(req.headers['last-event-id']).toBe('1');
        res.end('id: 2\ndata: second\n\n');
      }
    });
    const url = await listen(server);
    const got: string[] = [];
    for await (const m of readSse(url, { giveUpAfterMs: 200, retryDelayMs: 10 })) got.push(m.data);
    expect(got).toEqual(['first', 'second']);
    expect(requests).toBe(2);
  });
});
