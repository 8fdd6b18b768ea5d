// The server's password checks share the thread pool with file reads and gzip: at most the
// HashGate's concurrency derive keys at once, every check still gets its answer, and a full queue
// refuses (401) without deriving.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { HashGate } from '../../src/auth/hash-gate.js';
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter } from '../../src/auth/sign-in-limits.js';
import { useCarolAuth } from './support.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
/** Sign-in limits out of the way, so that every check reaches the gate (they are tested in sign-in-limits.test.ts). */
const unlimited = () => new SignInLimiter({ ...DEFAULT_SIGN_IN_LIMITS, userAndClient: 1000, client: 1000 });

describe('password checks of the server', () => {
  const carol = useCarolAuth('bs-password-gate-');

  it('derive at most the gate allows at once; right and wrong passwords, known and unknown users, all answered', async () => {
    const gate = new HashGate({ concurrency: 2, maxQueued: 100 });
    const authenticator = createAuthenticator(carol.auth.users, carol.auth.tokens, Date.now, { ttlMs: 0 }, gate, unlimited());
    const headers = [
      ...Array.from({ length: 12 }, (_, i) => basic('carol', `wrong-${i}`)),
      ...Array.from({ length: 6 }, (_, i) => basic(`nobody-${i}`, 'x')),
      basic('carol', 'carol-secret'),
    ];
    const results = await Promise.all(headers.map((h) => authenticator.authenticate(h)));
    expect(results.slice(0, 18).every((r) => r.kind === 'rejected')).toBe(true);
    expect(results[18]).toMatchObject({ kind: 'authenticated', principal: { user: 'carol' } });
    expect(gate.peakActive).toBe(2);
    expect(gate.hashes).toBe(headers.length);
  });

  it('refuses without deriving once the queue is full', async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 2 });
    const authenticator = createAuthenticator(carol.auth.users, carol.auth.tokens, Date.now, { ttlMs: 0 }, gate, unlimited());
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => authenticator.authenticate(basic('carol', `wrong-${i}`))));
    expect(gate.hashes).toBe(3);
    expect(gate.refusedBusy).toBe(5);
    expect(results.filter((r) => r.kind === 'rejected' && /too many password checks/.test(r.reason))).toHaveLength(5);
  });

  it("runs every waiting 'first' check before any waiting 'later' one, each queue in arrival order", async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 100 });
    const order: string[] = [];
    let open!: () => void;
    const held = gate.run(() => new Promise<void>((r) => (open = r)));
    const runs = ['later-1', 'first-1', 'later-2', 'first-2'].map((name) =>
      gate.run(async () => void order.push(name), undefined, name.startsWith('first') ? 'first' : 'later'),
    );
    expect(gate.waiting).toBe(4);
    open();
    await Promise.all([held, ...runs]);
    expect(order).toEqual(['first-1', 'first-2', 'later-1', 'later-2']);
  });

  it('a first login from a client without failures is checked before the queued wrong passwords of another client', async () => {
    const gate = new HashGate({ concurrency: 1, maxQueued: 100 });
    const authenticator = createAuthenticator(carol.auth.users, carol.auth.tokens, Date.now, { ttlMs: 0 }, gate);
    // One failure makes the attacker's address a suspect; then a flood from it queues up.
    expect(await authenticator.authenticate(basic('nobody-x', 'x'), '10.0.0.66')).toMatchObject({ kind: 'rejected' });
    const finished: string[] = [];
    const flood = Array.from({ length: 12 }, (_, i) =>
      authenticator.authenticate(basic(`nobody-${i}`, 'x'), '10.0.0.66').then(() => void finished.push(`wrong-${i}`)),
    );
    const login = authenticator.authenticate(basic('carol', 'carol-secret'), '10.0.0.7').then((r) => {
      finished.push('login');
      return r;
    });
    expect(await login).toMatchObject({ kind: 'authenticated', principal: { user: 'carol' } });
    await Promise.all(flood);
    // The first wrong password already holds the only slot; the login comes right after it.
    expect(finished.indexOf('login')).toBeLessThanOrEqual(1);
  });
});
