// How many wrong passwords the server takes, and from whom. Password guessing is limited before
// any hashing, so a guesser costs the server nothing once limited, without letting a guesser lock
// the real user out:
//
//   per user name and client  `userAndClient` failures are free; then each try waits twice as long
//                             after the last failure as the one before (1 s, 2 s, 4 s, ... up to
//                             `maxBackoffSeconds`). A right password clears the record.
//   per client                the same over every user name a client tries (`client` free failures),
//                             so trying many names from one address is limited too.
//   per user name             `user` failures from all clients together do not lock the name: they
//                             only take the free tries away from clients that failed on it (the
//                             backoff starts at their first failure). A client that has not failed
//                             on the name always gets its try, so the real user signs in from her
//                             own machine whatever a guesser elsewhere does.
//
// Checks still running count as failures until they end, so a thousand simultaneous guesses get
// the same few tries as a thousand sequential ones. A client with a failure on record (or a check
// running) has its checks queued behind those of clients without ('later' in HashGate), so a first
// sign-in does not wait behind a flood of wrong passwords. Records are forgotten
// `forgetAfterSeconds` after their last failure; memory is bounded (least recently used dropped).
// Unknown user names are counted like known ones, so the answers tell nothing of which exist.

import { isIPv6 } from 'node:net';
import { LRUCache } from 'lru-cache';
import { assertNever } from '../query/assert.js';
import type { Priority } from './hash-gate.js';

export interface SignInLimits {
  /** Failures of one user name from one client before each further try waits. */
  readonly userAndClient: number;
  /** Failures from one client, whatever the user names, before each further try waits. */
  readonly client: number;
  /** Failures of one user name from all clients before the clients that failed on it lose their free tries. */
  readonly user: number;
  /** The longest wait between two tries, in seconds. */
  readonly maxBackoffSeconds: number;
  /** A record is forgotten this long after its last failure, in seconds. */
  readonly forgetAfterSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { userAndClient: 5, client: 20, user: 100, maxBackoffSeconds: 900, forgetAfterSeconds: 3600 };

/** Which limit refused a try. */
export type LimitScope = 'userAndClient' | 'client';

/** How a password check admitted by the limiter ended: 'unchecked' when it never ran (the gate was full). */
export type CheckOutcome = 'failed' | 'succeeded' | 'unchecked';

export type Admission =
  | { readonly kind: 'go'; readonly priority: Priority; done(outcome: CheckOutcome): void }
  | { readonly kind: 'wait'; readonly scope: LimitScope; readonly retryAfterSeconds: number };

interface Tally {
  failures: number;
  /** Epoch ms of the last failure (meaningful while failures > 0). */
  lastFailure: number;
  /** Checks admitted and not yet done. */
  running: number;
}

const BASE_BACKOFF_MS = 1000;
/** Records kept per kind; beyond, the least recently used go first. */
const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * The key of a client address: IPv4-mapped IPv6 as IPv4, and IPv6 by its /64 (one host usually
 * holds a whole /64, so counting single addresses would give it billions of fresh starts).
 * Requests without an address (not over HTTP) share one key.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return '-';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros. */
function ipv6Groups(address: string): string[] {
  const bare = address.split('%')[0]!;
  const [head, tail] = bare.includes('::') ? (bare.split('::') as [string, string]) : [bare, undefined];
  const groups = (part: string | undefined): string[] => {
    if (part === undefined || part === '') return [];
    return part.split(':').flatMap((g) => {
      if (!g.includes('.')) return [g];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    });
  };
  const front = groups(head);
  const back = groups(tail);
  const all = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return all.map((g) => parseInt(g, 16).toString(16));
}

export class SignInLimiter {
  readonly limits: SignInLimits;
  private readonly pairs: LRUCache<string, Tally>;
  private readonly clients: LRUCache<string, Tally>;
  private readonly users: LRUCache<string, Tally>;
  /** Tries refused without a check. */
  refused = 0;

  constructor(
    limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    private readonly clock: () => number = Date.now,
    maxEntries: number = DEFAULT_MAX_ENTRIES,
  ) {
    this.limits = limits;
    // lru-cache keeps the bound and the recency; forgetting is checked against our own clock (its
    // TTL runs on performance.now(), which a test cannot move).
    this.pairs = new LRUCache({ max: maxEntries });
    this.clients = new LRUCache({ max: maxEntries });
    this.users = new LRUCache({ max: maxEntries });
  }

  /** Records held, of each kind (bounded by maxEntries). */
  get size(): { readonly pairs: number; readonly clients: number; readonly users: number } {
    return { pairs: this.pairs.size, clients: this.clients.size, users: this.users.size };
  }

  /**
   * Whether `user` may have a password check from `client` now. If so, call done() once with how
   * it ended; if not, retry after `retryAfterSeconds`.
   */
  admit(user: string, client: string | undefined): Admission {
    const now = this.clock();
    const from = clientKey(client);
    // NUL never occurs in a client key, so the pair key splits one way only.
    const pairKey = `${from}\0${user}`;
    const pair = this.current(this.pairs, pairKey, now);
    const byClient = this.current(this.clients, from, now);
    const byUser = this.current(this.users, user, now, false);
    const userFree = byUser !== undefined && byUser.failures >= this.limits.user ? 1 : this.limits.userAndClient;
    const pairWait = this.waitMs(pair, userFree, now);
    const clientWait = this.waitMs(byClient, this.limits.client, now);
    if (pairWait > 0 || clientWait > 0) {
      this.refused++;
      this.dropIfClean(this.pairs, pairKey, pair);
      this.dropIfClean(this.clients, from, byClient);
      return { kind: 'wait', scope: pairWait >= clientWait ? 'userAndClient' : 'client', retryAfterSeconds: Math.max(1, Math.ceil(Math.max(pairWait, clientWait) / 1000)) };
    }
    const priority: Priority = byClient.failures === 0 && byClient.running === 0 ? 'first' : 'later';
    pair.running++;
    byClient.running++;
    let finished = false;
    return {
      kind: 'go',
      priority,
      done: (outcome) => {
        if (finished) return;
        finished = true;
        pair.running--;
        byClient.running--;
        switch (outcome) {
          case 'failed': {
            const at = this.clock();
            this.fail(this.pairs, pairKey, pair, at);
            this.fail(this.clients, from, byClient, at);
            this.fail(this.users, user, this.current(this.users, user, at), at);
            break;
          }
          case 'succeeded':
            // The right password from this client: its tries of this name start afresh. The
            // client's and the name's counts stay: a guesser who knows one password must not
            // clear the record of her guesses at others.
            pair.failures = 0;
            break;
          case 'unchecked':
            break;
          default:
            assertNever(outcome, 'check outcome');
        }
        this.dropIfClean(this.pairs, pairKey, pair);
        this.dropIfClean(this.clients, from, byClient);
      },
    };
  }

  /** How long a try must still wait, in ms (0: it may go now). */
  private waitMs(t: Tally, free: number, now: number): number {
    if (t.failures + t.running < free) return 0;
    // Past the free tries, one check at a time; those running end within seconds.
    if (t.running > 0) return BASE_BACKOFF_MS;
    const backoff = Math.min(this.limits.maxBackoffSeconds * 1000, BASE_BACKOFF_MS * 2 ** (t.failures - free));
    return Math.max(0, t.lastFailure + backoff - now);
  }

  /** The record of `key` as of `now` (failures forgotten after their time), made when missing unless `create` is false. */
  private current(cache: LRUCache<string, Tally>, key: string, now: number): Tally;
  private current(cache: LRUCache<string, Tally>, key: string, now: number, create: false): Tally | undefined;
  private current(cache: LRUCache<string, Tally>, key: string, now: number, create = true): Tally | undefined {
    let t = cache.get(key);
    if (t !== undefined && t.failures > 0 && now - t.lastFailure >= this.limits.forgetAfterSeconds * 1000) t.failures = 0;
    if (t === undefined && create) {
      t = { failures: 0, lastFailure: 0, running: 0 };
      cache.set(key, t);
    }
    return t;
  }

  private fail(cache: LRUCache<string, Tally>, key: string, t: Tally, at: number): void {
    t.failures++;
    t.lastFailure = at;
    // Dropped from the cache while the check ran (the bound) and made again since: count it there.
    const held = cache.get(key);
    if (held !== undefined && held !== t) {
      held.failures = Math.max(held.failures, t.failures);
      held.lastFailure = at;
      return;
    }
    cache.set(key, t);
  }

  private dropIfClean(cache: LRUCache<string, Tally>, key: string, t: Tally): void {
    if (t.failures === 0 && t.running === 0 && cache.peek(key) === t) cache.delete(key);
  }
}
