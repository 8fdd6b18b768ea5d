// What a running cache node knows and counts: its configuration (replaced on reload), its store,
// its password checkers, its counters and its registration. The request handlers (entries.ts,
// pages.ts) read it; only applyConfig changes the configuration.

import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import { FailureLimiter, HashGate, type FailureLimiterOptions, type HashGateOptions } from '../auth/hash-gate.js';
import { costliest, PasswordChecker } from './access.js';
import type { NodeConfig } from './config.js';
import { Registrar } from './registration.js';
import type { DiskStore } from './storage.js';
import { summarize, type NodeStatus } from './ui.js';
import { newBazelCounters, type BazelStatus } from './bazel-counters.js';
import { WriteSlots } from './write-slots.js';

export const MiB = 1024 * 1024;
export const NODE_VERSION = '1';

export interface NodeCounters {
  hits: number;
  misses: number;
  writes: number;
  rejectedTooLarge: number;
  discardedTooLarge: number;
  bytesIn: number;
  bytesOut: number;
}

export interface NodeStateOptions {
  readonly store: DiskStore;
  readonly config: NodeConfig;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly reportIntervalMs: number;
  readonly passwordChecks: (HashGateOptions & Omit<FailureLimiterOptions, 'clock'>) | undefined;
  /** The bound on concurrent writes of Bazel's protocols (write-slots.ts). */
  readonly maxConcurrentWrites?: number;
}

export class NodeState {
  readonly store: DiskStore;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly startedAt: number;
  // One gate and one limiter for cache and UI checks: together they may not starve file reads.
  readonly gate: HashGate;
  readonly failures: FailureLimiter;
  readonly checker: PasswordChecker;
  readonly uiChecker: PasswordChecker;
  readonly counters: NodeCounters = { hits: 0, misses: 0, writes: 0, rejectedTooLarge: 0, discardedTooLarge: 0, bytesIn: 0, bytesOut: 0 };
  /** Bazel's protocols (HTTP /ac/ and /cas/, gRPC), counted apart from the Gradle/Maven ones above. */
  readonly bazel: BazelStatus = newBazelCounters();
  readonly writeSlots: WriteSlots;
  private current: NodeConfig;
  private generatedCredentials: { username: string; password: string } | null = null;
  private registration: Registrar | null = null;
  private volumeCache: { at: number; capacity: number; free: number } | null = null;
  private lastTarget = Number.POSITIVE_INFINITY;
  private readonly reportIntervalMs: number;

  constructor(options: NodeStateOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.clock = options.clock;
    this.startedAt = options.clock();
    this.current = options.config;
    this.reportIntervalMs = options.reportIntervalMs;
    this.writeSlots = new WriteSlots(options.maxConcurrentWrites);
    this.gate = new HashGate(options.passwordChecks);
    this.failures = new FailureLimiter({ ...options.passwordChecks, clock: options.clock });
    this.checker = new PasswordChecker(this.gate, this.failures, options.clock);
    this.uiChecker = new PasswordChecker(this.gate, this.failures, options.clock);
    this.applyConfig(options.config, true);
  }

  get config(): NodeConfig {
    return this.current;
  }

  /** Credentials of `uiAccess: generated` (null for other kinds). */
  get generated(): { username: string; password: string } | null {
    return this.generatedCredentials;
  }

  get registrar(): Registrar | null {
    return this.registration;
  }

  /** Target size in bytes: fixed, or what the volume allows while keeping the free space buffer. */
  async targetBytes(): Promise<number> {
    const ts = this.current.targetSize;
    switch (ts.type) {
      case 'fixed':
        this.lastTarget = ts.sizeMiB * MiB;
        return this.lastTarget;
      case 'maxAvailable': {
        const now = Date.now();
        if (!this.volumeCache || now - this.volumeCache.at > 2000) this.volumeCache = { at: now, ...(await this.store.volume()) };
        const buffer = this.current.freeSpaceBufferMiB * MiB;
        // Capacity minus the buffer, and never more than what is free now plus what the cache holds
        // (other files on the volume count against the cache, not against the buffer).
        this.lastTarget = Math.max(0, Math.min(this.volumeCache.capacity - buffer, this.store.bytes + this.volumeCache.free - buffer));
        return this.lastTarget;
      }
    }
  }

  applyConfig(next: NodeConfig, initial: boolean): void {
    const previous = this.current;
    this.current = next;
    this.checker.reset(costliest([...next.users.values()].map((u) => u.password)));
    this.uiChecker.reset(next.uiAccess.type === 'secure' ? next.uiAccess.password.parameters : undefined);
    this.store.setLimits({ maxEntryAgeMs: next.maxEntryAgeHours === null ? null : next.maxEntryAgeHours * 3_600_000, targetBytes: () => this.targetBytes() });
    if (next.uiAccess.type === 'generated') {
      if (!this.generatedCredentials) {
        this.generatedCredentials = { username: 'buildscope', password: randomBytes(18).toString('base64url') };
        // Logged once: these are the only credentials for the UI until the node restarts.
        this.logger.warn({ username: this.generatedCredentials.username, password: this.generatedCredentials.password }, 'node UI credentials generated (uiAccess: generated)');
      }
    } else {
      this.generatedCredentials = null;
    }
    const regChanged = initial || JSON.stringify(previous.registration) !== JSON.stringify(next.registration);
    if (regChanged) {
      this.registration?.stop();
      this.registration = null;
      if (next.registration) {
        this.registration = new Registrar(next.registration, () => this.status(), this.logger, this.reportIntervalMs);
        this.registration.start();
      }
    }
    if (next.anonymousLevel === 'none' && next.users.size === 0) {
      this.logger.warn('no anonymous access and no users: nobody can use this cache; set cache.accessControl in the configuration file');
    }
    void this.store.scheduleEviction();
  }

  status(): NodeStatus {
    return {
      version: NODE_VERSION,
      startedAt: this.startedAt,
      entries: this.store.size,
      sizeBytes: this.store.bytes,
      targetBytes: this.lastTarget,
      ...this.counters,
      evicted: this.store.evictedCount,
      evictedByPart: { ...this.store.evictedBy },
      expired: this.store.expiredCount,
      bazel: this.bazel,
      config: summarize(this.current),
    };
  }

  stop(): void {
    this.registration?.stop();
  }
}
