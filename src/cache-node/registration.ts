// Registration with the Buildscope server: the node reports its address and status with its key
// and secret every interval. Failures are logged (once per kind of failure, not every interval)
// and never stop the node from serving.

import type { Logger } from '../log.js';
import type { Registration } from './config.js';
import type { NodeStatus } from './ui.js';

/** The server route a node reports to (src/http/cache-registry-plugin.ts). */
export const REPORT_PATH = '/api/build-cache/node-status';

export interface NodeReport {
  readonly key: string;
  readonly secret: string;
  readonly nodeAddress: string;
  readonly status: Omit<NodeStatus, 'config'> & { readonly config: unknown };
}

export type RegistrationState =
  | { readonly kind: 'pending' }
  | { readonly kind: 'registered'; readonly name: string; readonly at: number }
  | { readonly kind: 'rejected'; readonly detail: string }
  | { readonly kind: 'unreachable'; readonly detail: string };

export class Registrar {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private retryMs = 0;
  private inFlight: Promise<void> | null = null;
  state: RegistrationState = { kind: 'pending' };

  constructor(
    private readonly registration: Registration,
    private readonly status: () => NodeStatus,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.stopped = false;
    void this.cycle();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Reports, then waits: the interval while registered, and after a failure a short delay that
   * doubles up to the interval (a server that starts after its nodes sees them within seconds).
   */
  private async cycle(): Promise<void> {
    await this.reportNow();
    if (this.stopped) return;
    const ok = this.state.kind === 'registered';
    this.retryMs = ok ? 0 : Math.min(this.intervalMs, this.retryMs === 0 ? Math.min(5_000, this.intervalMs) : this.retryMs * 2);
    this.timer = setTimeout(() => void this.cycle(), ok ? this.intervalMs : this.retryMs);
    this.timer.unref();
  }

  reportNow(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.report().finally(() => {
        this.inFlight = null;
      });
    }
    return this.inFlight;
  }

  private async report(): Promise<void> {
    const reg = this.registration;
    const url = new URL(REPORT_PATH, reg.serverAddress.endsWith('/') ? reg.serverAddress : `${reg.serverAddress}/`).toString();
    const body: NodeReport = { key: reg.key, secret: reg.secret, nodeAddress: reg.nodeAddress, status: this.status() };
    let next: RegistrationState;
    try {
      const res = await fetch(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      if (res.ok) {
        const name = (JSON.parse(text) as { name?: string }).name ?? '?';
        next = { kind: 'registered', name, at: Date.now() };
      } else if (res.status === 401 || res.status === 403) {
        next = {
          kind: 'rejected',
          detail: `the server at ${reg.serverAddress} rejected this node's key or secret (HTTP ${res.status}). Create credentials on the server with \`buildscope cache-node credentials NAME\` and copy the key and secret into the "registration" section of the configuration file`,
        };
      } else {
        next = { kind: 'unreachable', detail: `the server at ${url} answered HTTP ${res.status}: ${text.slice(0, 200)}` };
      }
    } catch (err) {
      next = { kind: 'unreachable', detail: `cannot reach the server at ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}` };
    }
    const changed = next.kind !== this.state.kind || ('detail' in next && 'detail' in this.state && next.detail !== this.state.detail);
    this.state = next;
    if (!changed) return;
    switch (next.kind) {
      case 'registered':
        this.logger.info({ server: reg.serverAddress, name: next.name }, `registered with the server as node '${next.name}'`);
        break;
      case 'rejected':
        this.logger.error({ server: reg.serverAddress }, `registration failed: ${next.detail}; the node keeps serving`);
        break;
      case 'unreachable':
        this.logger.error({ server: reg.serverAddress }, `registration failed: ${next.detail}; retrying (at most every ${Math.round(this.intervalMs / 1000)} s), the node keeps serving`);
        break;
    }
  }
}
