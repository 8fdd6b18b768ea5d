// Clients that stop reading a stream must cost the server a bounded buffer each, whatever the
// size of what they asked for (issue: 50 such readers of a 100,005-event build cost 1.58 GB).
// The server runs in a process of its own (server-process.ts); its memory is measured after a
// full garbage collection, before the readers connect and while they all hang.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Socket } from 'node:net';
import { pgAvailable, createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { buildId } from '../support/lines.js';
import { charged, MiB, slowReader, startServerProcess, type ServerProcess } from './harness.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const EVENTS = Number(process.env.SLOW_READER_EVENTS ?? 100_005);
/** Small builds after the big one: the listings send about 1 KB each, more than the sockets hold. */
const BUILDS = Number(process.env.SLOW_READER_BUILDS ?? 3000);
const READERS = Number(process.env.SLOW_READERS ?? 12);
/**
 * The bound per reader: the stored text a reader holds (at most about 1 M characters, up to 2 MB
 * in V8), the sink's 256 KiB and the socket's buffers. Before the events were read in slices, one
 * reader of this build cost about 28 MB.
 */
const BOUND_PER_READER = 6 * MiB;

interface Measured {
  readonly perReader: number;
  readonly rssPerReader: number;
}

async function hang(server: ServerProcess, paths: readonly string[], readers: number): Promise<Measured> {
  const before = await server.memory();
  const sockets: Socket[] = [];
  try {
    const opened = await Promise.all(
      Array.from({ length: readers }, (_, i) => {
        const path = paths[i % paths.length]!;
        return slowReader(server.port, path, { authorization: `Bearer ${server.key}` }, { awaitFirstBytes: !path.startsWith('/api/builds') });
      }),
    );
    for (const { socket, first } of opened) {
      sockets.push(socket);
      if (first !== '') expect(first).toMatch(/^HTTP\/1\.1 200/);
    }
    // The server is still answering while every reader hangs.
    const r = await fetch(`${server.url}/api/version`);
    expect(r.status).toBe(200);
    const during = await server.memory();
    return { perReader: (charged(during) - charged(before)) / readers, rssPerReader: (during.rss - before.rss) / readers };
  } finally {
    for (const s of sockets) s.destroy();
  }
}

function report(what: string, m: Measured): void {
  console.log(`${what}: ${(m.perReader / MiB).toFixed(2)} MiB heap+external, ${(m.rssPerReader / MiB).toFixed(2)} MiB RSS per slow reader (${READERS} readers)`);
}

async function countEvents(server: ServerProcess, path: string): Promise<{ count: number; lastId: string }> {
  const r = await fetch(server.url + path, { headers: { authorization: `Bearer ${server.key}` } });
  expect(r.status).toBe(200);
  let count = 0;
  let lastId = '';
  let rest = '';
  const decoder = new TextDecoder();
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const blocks = text.split('\n\n');
    rest = blocks.pop()!;
    for (const b of blocks) {
      if (!b.includes('event: BuildEvent')) continue;
      count++;
      lastId = /^id: (.*)$/m.exec(b)![1]!;
    }
  }
  return { count, lastId };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`slow readers on ${dialect}`, () => {
    let server: ServerProcess;
    let pg: TestDatabase | undefined;
    beforeAll(async () => {
      pg = dialect === 'postgres' ? await createTestDatabase() : undefined;
      server = await startServerProcess({ ...(pg ? { url: pg.url } : {}), events: EVENTS, builds: BUILDS });
    });
    afterAll(async () => {
      await server?.close();
      await pg?.drop();
    });

    it(`of the events of a ${EVENTS}-event build (v1 and v2) cost a bounded buffer each`, async () => {
      const m = await hang(server, [`/build-export/v2/build/${server.buildId}/events`, `/build-export/v1/build/${server.buildId}/events`], READERS);
      report(`events, ${dialect}`, m);
      expect(m.perReader).toBeLessThan(BOUND_PER_READER);
    });

    it(`of the build listings of ${BUILDS + 1} builds (export streams and the REST long-poll) cost a bounded buffer each`, async () => {
      const m = await hang(
        server,
        [
          '/build-export/v2/builds/since/0?stream',
          '/build-export/v1/builds/since/0?stream',
          `/build-export/v2/builds/sinceBuild/${server.buildId}?stream`,
          '/build-export/v2/builds/since/0',
          `/api/builds?fromBuild=${buildId(BUILDS + 1)}&maxWaitSecs=20`,
        ],
        READERS,
      );
      report(`listings, ${dialect}`, m);
      expect(m.perReader).toBeLessThan(BOUND_PER_READER);
    });

    it('a reader that reads gets every event of the big build, in order', async () => {
      const all = await countEvents(server, `/build-export/v2/build/${server.buildId}/events`);
      expect(all).toEqual({ count: EVENTS, lastId: String(EVENTS) });
      const some = await countEvents(server, `/build-export/v2/build/${server.buildId}/events?eventTypes=BuildFinished`);
      expect(some).toEqual({ count: 1, lastId: '1' });
    });
  });
}
