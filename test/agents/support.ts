// A real Buildscope server on loopback for the capture agents' end-to-end tests (HTTP API and,
// when asked, the Build Event Service), and the searches and event exports a user would run. It is
// started as `serve` starts it (src/server.ts: every face, the first administrator, the Build Event
// Service endpoint), which the app-only test server of test/support/server.ts leaves out.

import { spawn, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { swapDifference, type Comparison } from '../../src/services/compare.js';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';

export interface AgentTestServer {
  readonly url: string;
  readonly besUrl?: string;
  /** An access key of the first user (every permission, publishScan included). */
  readonly accessKey: string;
  readonly server: RunningServer;
  /** IDs of the builds a search finds (oldest first). */
  search(query: string): Promise<string[]>;
  /** A build's events from the export API, in order. */
  events(id: string): Promise<{ eventType: string; data: Record<string, unknown>; timestamp: number }[]>;
  /** A build's summary with its derived attributes (REST). */
  build(id: string): Promise<{ id: string; toolType: string; attributes?: Record<string, unknown> } & Record<string, unknown>>;
  close(): Promise<void>;
}

/** `bes`: the Build Event Service endpoint on a free port, with these settings when an object. */
export async function startAgentTestServer(options: { bes?: boolean | Record<string, unknown> } = {}): Promise<AgentTestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'bs-agents-'));
  const config = parseConfig({ server: { host: '127.0.0.1', port: 0 }, ...(options.bes ? { bes: { ...(typeof options.bes === 'object' ? options.bes : {}), port: 0 } } : {}) }, { data: join(dir, 'data') });
  const server = await startServer({ config, logger: createLogger('test', 'warn'), print: () => undefined });
  const accessKey = server.created!.accessKey;
  const auth = { authorization: `Bearer ${accessKey}` };
  return {
    url: server.url,
    ...(server.besUrl ? { besUrl: server.besUrl } : {}),
    accessKey,
    server,
    async search(query) {
      const r = await fetch(`${server.url}/api/builds?fromInstant=0&maxWaitSecs=1&query=${encodeURIComponent(query)}`, { headers: auth });
      if (r.status !== 200) throw new Error(`search ${query}: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { id: string }[]).map((b) => b.id);
    },
    async events(id) {
      const r = await fetch(`${server.url}/build-export/v2/build/${id}/events`, { headers: { ...auth, accept: 'text/event-stream' } });
      if (r.status !== 200) throw new Error(`events of ${id}: ${r.status} ${await r.text()}`);
      const text = await r.text();
      return text
        .split('\n\n')
        .filter((m) => /^event: BuildEvent$/m.test(m))
        .map((m) => {
          const data = JSON.parse(m.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')) as { timestamp: number; type: { eventType: string }; data: Record<string, unknown> };
          return { eventType: data.type.eventType, data: data.data, timestamp: data.timestamp };
        });
    },
    async build(id) {
      const r = await fetch(`${server.url}/api/builds/${id}?models=attributes`, { headers: auth });
      if (r.status !== 200) throw new Error(`build ${id}: ${r.status} ${await r.text()}`);
      return (await r.json()) as never;
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr as they came. */
  readonly output: string;
}

/** Runs a command without blocking this process (the server under test lives in it). */
export function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      output += c.toString();
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      output += c.toString();
    });
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr, output }));
  });
}

/** GET /api/builds/{a}/compare/{b} through `get` (a test server's, with its credentials), expected to answer 200. */
export async function compareOver(get: (path: string) => Promise<Response>, a: string, b: string): Promise<Comparison> {
  const r = await get(`/api/builds/${a}/compare/${b}`);
  expect(r.status, await r.clone().text()).toBe(200);
  return (await r.json()) as Comparison;
}

/** The comparison the other way round: the headers exchanged and every difference swapped, in the same order. */
export function expectSwapped(c: Comparison, back: Comparison): void {
  expect(back.a).toEqual(c.b);
  expect(back.b).toEqual(c.a);
  expect(back.summary).toEqual(c.summary.map((e) => ({ ...e, difference: swapDifference(e.difference) })));
  expect(back.sections).toEqual(c.sections.map((s) => ({ ...s, differences: s.differences.map(swapDifference) })));
}
