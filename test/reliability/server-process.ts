// A server in a process of its own, so that a test can measure the memory it alone uses: the
// REST API and the export API over the database named by BS_DATA (SQLite directory) or BS_URL
// (PostgreSQL), with a user `reader`, one build of BS_EVENTS events stored in one chunk and
// BS_BUILDS small builds.
// Run with `node --expose-gc --import tsx` and an IPC channel; it sends
// `{ url, key, buildId, password }` when ready, answers `'memory'` with the memory after a full
// garbage collection, and closes on `'close'`.

import { exportPlugin } from '../../src/http/export-plugin.js';
import { startTestServer } from '../support/server.js';
import { buildId, buildLine, event, ingestLine } from '../support/lines.js';

export interface ReadyMessage {
  readonly url: string;
  readonly key: string;
  readonly password: string;
  readonly buildId: string;
}

export interface MemoryMessage {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** One ingest line of a native build with `count` events in all (BuildStarted ... BuildFinished). */
export function bigBuildLine(id: string, count: number): string {
  const start = 1_749_000_000_000;
  const events = [event(start, 'BuildStarted')];
  for (let i = 0; i < count - 2; i++) {
    events.push(event(start + i, 'TaskFinished', { path: `:module-${i % 97}:compileJava${i}`, outcome: i % 5 ? 'executed' : 'up-to-date', durationMs: i % 1000, cacheable: true }));
  }
  events.push(event(start + count, 'BuildFinished', { outcome: 'succeeded', failures: [] }));
  return ingestLine(id, events);
}

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined || process.send === undefined) throw new Error('run with --expose-gc and an IPC channel');
  const data = process.env.BS_DATA;
  const url = process.env.BS_URL;
  const location = url !== undefined ? { dialect: 'postgres' as const, url, cleanup: async () => undefined } : { dialect: 'sqlite' as const, data: data!, cleanup: async () => undefined };
  const s = await startTestServer(location, { plugins: [exportPlugin], raw: { export: { heartbeatMs: 1000, retryAfterSeconds: 1 } } });
  const key = await s.user('reader', ['exportData', 'accessBuildDataViaApi'], { password: 'reader-pw' });
  // Users that have not logged in yet (BS_LOGINS of them: login-1, login-2, ... with password login-pw).
  for (let i = 1; i <= Number(process.env.BS_LOGINS ?? 0); i++) await s.auth.users.addUser({ name: `login-${i}`, password: 'login-pw', permissions: ['accessBuildDataViaApi'], projects: null });
  const id = buildId(1);
  const count = Number(process.env.BS_EVENTS ?? 100_005);
  const stored = await s.store.ingestNdjson(bigBuildLine(id, count));
  if (stored[0]?.status !== 'stored') throw new Error(`the big build was not stored: ${JSON.stringify(stored)}`);
  // BS_BUILDS small builds after it, so that a listing stream has more to send than a socket holds.
  const more = Number(process.env.BS_BUILDS ?? 0);
  for (let from = 0; from < more; from += 500) {
    const lines = Array.from({ length: Math.min(500, more - from) }, (_, i) => buildLine({ id: buildId(from + i + 2), project: 'app', tags: ['ci', 'x'.repeat(200)] }));
    await s.store.ingestNdjson(lines.join('\n'));
  }
  process.on('message', (m) => {
    if (m === 'memory') {
      gc();
      gc();
      const u = process.memoryUsage();
      const reply: MemoryMessage = { rss: u.rss, heapUsed: u.heapUsed, external: u.external, arrayBuffers: u.arrayBuffers };
      process.send!({ memory: reply });
    } else if (m === 'close') {
      s.app.server.closeAllConnections();
      void s.close().then(() => process.exit(0));
    }
  });
  const ready: ReadyMessage = { url: s.url, key, password: 'reader-pw', buildId: id };
  process.send({ ready });
}

if (process.argv[1]?.endsWith('server-process.ts')) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  });
}
