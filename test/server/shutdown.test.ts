// Shutting down while a long-poll of GET /api/builds waits: the wait ends at once with what the
// listing has (an empty list), so a shutdown never waits out a client's maxWaitSecs. And a request
// that never ends (a body that stops coming) does not hold `serve`'s shutdown past
// server.stopTimeoutSeconds.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';
import { printedAccessKey, serve } from '../support/serve-cli.js';
import { waitFor } from '../support/wait.js';

// `serve` is a fresh Node process: slow to start on a busy machine.
vi.setConfig({ testTimeout: 240_000 });

const logger = createLogger('test', 'silent');

describe('shutdown with a long-poll waiting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-shutdown-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the waiting long-poll with an empty list and closes without waiting out maxWaitSecs', async () => {
    const server = await startServer({ config: parseConfig({ server: { port: 0 }, database: { data: dir } }), logger, print: () => undefined });
    const auth = { authorization: `Bearer ${server.created!.accessKey}` };
    const started = Date.now();
    // No starting point: only builds stored from now on, and there are none, so it waits (20 s at most).
    const waiting = fetch(`${server.url}/api/builds?maxWaitSecs=20`, { headers: auth });
    // Until the server counts it among the requests waiting.
    await waitFor(
      async () => /^buildscope_builds_requests_waiting 1$/m.test(await (await fetch(`${server.url}/metrics`, { headers: auth })).text()),
      'the long-poll among the requests waiting (buildscope_builds_requests_waiting 1)',
      30_000,
    );
    await server.close();
    const closedAfter = Date.now() - started;
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual([]);
    // Waiting out the long-poll would take 20 s; the shutdown ended it.
    expect(closedAfter).toBeLessThan(15_000);
  });
});

describe('serve: shutdown with a request that never ends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-shutdown-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('cuts the request off after stopTimeoutSeconds and exits with status 1', async () => {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'server:\n  stopTimeoutSeconds: 2\n');
    const s = await serve(['--data', dir, '--config', config]);
    const auth = { authorization: `Bearer ${printedAccessKey(s)}` };
    const { hostname, port } = new URL(s.url);
    // A POST whose body stops after its first bytes: the request stays in flight.
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    socket.write(`POST /api/builds HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n{"buildId":`);
    try {
      // Until the server counts it among the requests being answered.
      const inFlight = async () => (await (await fetch(`${s.url}/metrics`, { headers: auth })).text()).match(/^buildscope_http_requests_in_flight\{route="\/api\/builds",method="POST"\} (\d+)$/m)?.[1];
      await expect.poll(inFlight, { timeout: 120_000, interval: 50 }).toBe('1');
      const stopping = Date.now();
      expect(await s.stop()).toBe(1);
      // Node's own limit for a request is 300 s; the timeout of 2 s ended the shutdown.
      expect(Date.now() - stopping).toBeLessThan(60_000);
    } finally {
      socket.destroy();
      if (s.child.exitCode === null) await s.stop();
    }
  });
});
