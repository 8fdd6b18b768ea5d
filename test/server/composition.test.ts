// One composition root: with the Build Event Service endpoint on, the server still has one auth.
// The endpoint's password check runs at the server's one password gate and fills the one cache of
// authentications, from which the HTTP app then answers the same credentials without a check.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';
import { besClient, open, recorded, request, withInvocation } from '../agents/bes-client.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('composition', () => {
  it('opens auth once with the Build Event Service endpoint on: one password gate and one cache for gRPC and HTTP', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-composition-'));
    dirs.push(dir);
    const config = parseConfig({ server: { port: 0 }, database: { data: join(dir, 'data') }, bes: { port: 0 } });
    const server = await startServer({ config, logger: createLogger('test', 'silent'), print: () => undefined });
    const client = besClient(server.besUrl!);
    try {
      const { user, password } = server.created!;
      const basic = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      const gate = server.services.auth.passwordGate;
      expect(gate.hashes).toBe(0);

      // The endpoint admits the caller from the Authorization metadata: one check, at the server's gate.
      const events = withInvocation(recorded(), randomUUID());
      const { call, done } = open(client, basic);
      const acked = new Promise<void>((resolve) => call.once('data', () => resolve()));
      call.write(request((events[0]!['started'] as { uuid: string }).uuid, 1, events[0]!));
      await acked;
      expect(gate.hashes).toBe(1);

      // The HTTP app answers the same credentials from the same cache: no second check.
      const r = await fetch(`${server.url}/api/builds?maxWaitSecs=1`, { headers: { authorization: basic } });
      expect(r.status).toBe(200);
      expect(gate.hashes).toBe(1);

      call.end();
      await done;
    } finally {
      client.close();
      await server.close();
    }
  }, 60_000);
});
