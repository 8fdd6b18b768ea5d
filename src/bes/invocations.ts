// The invocations the Build Event Service endpoint is receiving, kept on disk until they finish.
//
// Bazel streams an invocation's events and may resume it on a new stream after an error, so what
// arrived must outlive a stream; but an invocation that never finishes must not cost the server
// without bound. Each event is reduced on arrival to what the build is made of (reduceBepEvent:
// file sets and command lines are dropped; the console is kept up to the bound the build keeps of
// it, and progress events past it are dropped) and appended to the invocation's file in a private
// directory; memory holds a few numbers per invocation. Bounds: the bytes one invocation keeps,
// the unfinished invocations of one user and of the whole endpoint, and the retry window after
// which an invocation whose streams all ended unfinished is dropped.

import { closeSync, createReadStream, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { reduceBepEvent, type BepEvent, type TimedBepEvent } from './bep-build.js';
import { wantedTestOutputs } from './bep-tests.js';
import { agentContract } from '../agents/contract.js';

export interface InvocationLimits {
  readonly maxInvocationBytes: number;
  readonly maxOpenInvocationsPerUser: number;
  readonly maxOpenInvocations: number;
  readonly retryWindowMs: number;
}

/** One unfinished invocation: where its events are, and what it holds. */
export interface Invocation {
  readonly id: string;
  /** The user whose stream opened it; streams of other users may not add to it. */
  readonly user: string;
  readonly file: string;
  fd: number | undefined;
  bytes: number;
  events: number;
  /** Console characters kept (progress events' text), and the last sequence number counted in them. */
  consoleChars: number;
  consoleSequence: number;
  /** Streams adding to it now. */
  streams: number;
  finished: boolean;
  /** When an invocation without streams is dropped (epoch ms); undefined while a stream is open. */
  expiresAt: number | undefined;
}

/** Why an invocation cannot be opened or added to; the endpoint turns each into a gRPC status. */
export type Refusal =
  | { readonly kind: 'otherUser' }
  | { readonly kind: 'tooManyOfUser'; readonly limit: number }
  | { readonly kind: 'tooMany'; readonly limit: number }
  | { readonly kind: 'tooLarge'; readonly limit: number };

export type Opened = { readonly ok: true; readonly invocation: Invocation } | { readonly ok: false; readonly refusal: Refusal };

export class InvocationSpool {
  readonly #dir: string;
  readonly #limits: InvocationLimits;
  readonly #now: () => number;
  readonly #open = new Map<string, Invocation>();
  #files = 0;

  constructor(limits: InvocationLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
    // Private to the server's user: events name hosts, users and paths of the build machines.
    this.#dir = mkdtempSync(join(tmpdir(), 'buildscope-bes-'));
  }

  /** Unfinished invocations and the bytes they keep on disk. */
  stats(): { invocations: number; bytes: number } {
    let bytes = 0;
    for (const inv of this.#open.values()) bytes += inv.bytes;
    return { invocations: this.#open.size, bytes };
  }

  /** The invocation a new stream of `user` adds to: the one it resumes, or a new one when the limits allow. */
  attach(id: string, user: string): Opened {
    this.sweep();
    const known = this.#open.get(id);
    if (known !== undefined) {
      if (known.user !== user) return { ok: false, refusal: { kind: 'otherUser' } };
      known.streams++;
      known.expiresAt = undefined;
      return { ok: true, invocation: known };
    }
    const { maxOpenInvocations, maxOpenInvocationsPerUser } = this.#limits;
    if (this.#open.size >= maxOpenInvocations) return { ok: false, refusal: { kind: 'tooMany', limit: maxOpenInvocations } };
    let ofUser = 0;
    for (const inv of this.#open.values()) if (inv.user === user) ofUser++;
    if (ofUser >= maxOpenInvocationsPerUser) return { ok: false, refusal: { kind: 'tooManyOfUser', limit: maxOpenInvocationsPerUser } };
    const file = join(this.#dir, `${++this.#files}.ndjson`);
    const invocation: Invocation = { id, user, file, fd: openSync(file, 'a', 0o600), bytes: 0, events: 0, consoleChars: 0, consoleSequence: 0, streams: 1, finished: false, expiresAt: undefined };
    this.#open.set(id, invocation);
    return { ok: true, invocation };
  }

  /**
   * Keeps what the build needs of one event. Events are written as they come; a sequence number
   * sent twice (Bazel re-sends what it did not see acknowledged) is resolved when the file is read.
   */
  add(inv: Invocation, sequence: number, event: BepEvent, time: number | undefined): Refusal | undefined {
    const reduced = reduceBepEvent(event);
    if (reduced === undefined) return undefined;
    if (reduced['progress'] !== undefined) {
      // Once more console is kept than the build shows (bepToBuild then sees it was cut), the
      // rest would change nothing: a chatty build costs one console, not all of its output.
      if (inv.consoleChars > agentContract().bounds.consoleChars) return undefined;
      // A re-sent event (its sequence number already seen) replaces its copy: counted once.
      if (sequence > inv.consoleSequence) {
        const { stdout, stderr } = reduced['progress'] as { stdout?: unknown; stderr?: unknown };
        for (const text of [stdout, stderr]) if (typeof text === 'string') inv.consoleChars += text.length;
        inv.consoleSequence = sequence;
      }
    }
    const line = Buffer.from(JSON.stringify({ s: sequence, ...(time !== undefined ? { t: time } : {}), e: reduced }) + '\n');
    if (inv.bytes + line.length > this.#limits.maxInvocationBytes) return { kind: 'tooLarge', limit: this.#limits.maxInvocationBytes };
    if (inv.fd === undefined) inv.fd = openSync(inv.file, 'a', 0o600);
    writeSync(inv.fd, line);
    inv.bytes += line.length;
    inv.events++;
    return undefined;
  }

  /** A stream of the invocation ended: without streams, an unfinished invocation waits the retry window for Bazel to resume it. */
  detach(inv: Invocation): void {
    inv.streams = Math.max(0, inv.streams - 1);
    if (inv.streams > 0 || inv.finished || !this.#open.has(inv.id)) return;
    inv.expiresAt = this.#now() + this.#limits.retryWindowMs;
    if (inv.fd !== undefined) {
      closeSync(inv.fd);
      inv.fd = undefined;
    }
  }

  /** The finished invocation's events in sequence order (the last copy of a re-sent one); its state is gone after. */
  take(inv: Invocation): TimedBepEvent[] {
    inv.finished = true;
    const text = readFileSync(inv.file, 'utf8');
    this.drop(inv);
    const bySequence = new Map<number, TimedBepEvent>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const { s, t, e } = JSON.parse(line) as { s: number; t?: number; e: BepEvent };
      bySequence.set(s, { event: e, ...(t !== undefined ? { time: t } : {}) });
    }
    return [...bySequence.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e);
  }

  /**
   * The URIs of the test reports and logs the finished invocation's build will read, failed
   * attempts' first; read line by line, so that only the URIs are held.
   */
  async testOutputs(inv: Invocation): Promise<string[]> {
    const failed: string[] = [];
    const other: string[] = [];
    const lines = createInterface({ input: createReadStream(inv.file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.includes('"testResult"')) continue;
      const { e } = JSON.parse(line) as { e: BepEvent };
      for (const o of wantedTestOutputs(e)) (o.failed ? failed : other).push(o.uri);
    }
    return [...new Set([...failed, ...other])];
  }

  /** Forgets the invocation and removes its file. */
  drop(inv: Invocation): void {
    if (this.#open.get(inv.id) === inv) this.#open.delete(inv.id);
    if (inv.fd !== undefined) {
      closeSync(inv.fd);
      inv.fd = undefined;
    }
    rmSync(inv.file, { force: true });
  }

  /** Drops the invocations whose retry window has passed. */
  sweep(): void {
    const now = this.#now();
    for (const inv of [...this.#open.values()]) if (inv.expiresAt !== undefined && inv.expiresAt <= now) this.drop(inv);
  }

  close(): void {
    for (const inv of [...this.#open.values()]) this.drop(inv);
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
