// Concurrent wrong passwords (POST /api/auth/token and Basic auth on /api/builds) must not hold
// an unrelated request: its median latency while they run stays under a bound relative to the
// baseline measured in the same run, and neither do they hold a first login from another client
// (docs/operations.md, "Reliability").

import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServerProcess, type ServerProcess } from './harness.js';
import { waitFor } from '../support/wait.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const ATTACKERS = Number(process.env.WRONG_PASSWORD_CLIENTS ?? 64);
const SAMPLES = 15;

/**
 * A request from a given loopback address (the whole of 127/8 reaches the server on Linux), so
 * that the attackers and the user signing in are different clients, as they would be for real.
 */
function send(url: string, from: string, method: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, localAddress: from, headers: { authorization } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const ATTACKER_ADDRESS = '127.0.0.3';
const USER_ADDRESS = '127.0.0.2';

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('wrong passwords on the server', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ events: 10, logins: 10 });
  });
  afterAll(() => server?.close());

  /** The latency of an unrelated request: a build by ID with an access key. */
  async function unrelated(): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      const r = await fetch(`${server.url}/api/builds/${server.buildId}`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(r.status).toBe(200);
      await r.text();
      times.push(performance.now() - t0);
    }
    return times;
  }

  let nextLogin = 1;
  /** The latency of a first login (a password not yet in the authentication cache): it needs scrypt too. */
  async function logins(samples: number): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const status = await send(`${server.url}/api/builds/${server.buildId}`, USER_ADDRESS, 'GET', `Basic ${Buffer.from(`login-${nextLogin++}:login-pw`).toString('base64')}`);
      expect(status).toBe(200);
      times.push(performance.now() - t0);
    }
    return times;
  }

  it(`${ATTACKERS} clients sending wrong passwords do not hold an unrelated request`, async () => {
    await unrelated(); // warm-up
    const baseline = median(await unrelated());
    const loginAlone = median(await logins(5));
    let stop = false;
    const counts = { sent: 0, refused: 0, other: 0 };
    const attacker = async (i: number): Promise<void> => {
      while (!stop) {
        const wrong = `Basic ${Buffer.from(`${i % 2 ? 'reader' : `nobody${i}`}:wrong-${counts.sent}`).toString('base64')}`;
        const status =
          i % 2
            ? await send(`${server.url}/api/auth/token`, ATTACKER_ADDRESS, 'POST', wrong)
            : await send(`${server.url}/api/builds?maxWaitSecs=1`, ATTACKER_ADDRESS, 'GET', wrong);
        counts.sent++;
        if (status === 401 || status === 429) counts.refused++;
        else counts.other++;
      }
    };
    const attackers = Array.from({ length: ATTACKERS }, (_, i) => attacker(i));
    // Let the password checks queue up before measuring.
    await waitFor(() => counts.sent >= ATTACKERS, `${ATTACKERS} wrong passwords answered`, 60_000);
    const underLoad = median(await unrelated());
    const loginUnderLoad = median(await logins(5));
    stop = true;
    await Promise.all(attackers);
    // The bound: five times the baseline plus 250 ms (scheduling on a shared two-core machine).
    const bound = 5 * baseline + 250;
    console.log(`unrelated request: median ${baseline.toFixed(1)} ms alone, ${underLoad.toFixed(1)} ms with ${ATTACKERS} clients sending wrong passwords (bound ${bound.toFixed(0)} ms); ${counts.sent} wrong passwords sent, ${counts.refused} refused (401/429)`);
    // A first login needs its own key derivation: it waits for the ones running, not for the
    // queue of wrong passwords (they come from a client that failed, and wait behind it).
    const loginBound = 5 * loginAlone + 250;
    console.log(`first login with the right password: median ${loginAlone.toFixed(1)} ms alone, ${loginUnderLoad.toFixed(1)} ms under the wrong passwords (bound ${loginBound.toFixed(0)} ms)`);
    expect(counts.other).toBe(0);
    expect(underLoad).toBeLessThan(bound);
    expect(loginUnderLoad).toBeLessThan(loginBound);
  });
});
