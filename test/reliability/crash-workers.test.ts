// kill -9 of a server process while clients publish builds over HTTP, with `serve --workers 2`
// (two processes writing one database), on SQLite and PostgreSQL. Every build the server
// acknowledged is there and whole after the crash; no build is half-stored; the clients' retries
// of what was not acknowledged store each build once.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { printedAccessKey, serve, serverChildren } from '../support/serve-cli.js';

vi.setConfig({ testTimeout: 300_000 });

const CLIENTS = 4;
/** Kills, one after the other, each after the replacement of the one before listens. */
const KILLS = 2;

/** A build with `n` task events, so a half-stored build would show in its event count. */
function buildLine(id: string, n: number): string {
  const t0 = 1_790_000_000_000;
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
  const events = [ev(t0, 'BuildStarted', {}), ev(t0 + 1, 'ProjectStructure', { rootProjectName: 'crash' })];
  for (let i = 0; i < n; i++) events.push(ev(t0 + 10 + i, 'TaskFinished', { path: `:t${i}`, outcome: 'success', cacheable: false }));
  events.push(ev(t0 + 60_000, 'BuildFinished', { outcome: 'succeeded', failures: [] }));
  return JSON.stringify({ buildId: id, toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19', events });
}

const idOf = (client: number, i: number) => `c${client}${i.toString(36).padStart(11, '0')}`;
const eventsOf = (id: string) => 3 + (parseInt(id.slice(-3), 36) % 40);

describe.each([
  { name: 'sqlite' as const, skip: false },
  { name: 'postgres' as const, skip: !pgAvailable() },
])('kill -9 of a worker during HTTP ingest on $name', ({ name, skip }) => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-crash-workers-'));
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('keeps every acknowledged build whole and stores each retried build once', async () => {
    if (name === 'postgres') db = await createTestDatabase();
    const s = await serve([...(db ? ['--db', db.url] : ['--data', dir]), '--workers', '2']);
    const key = printedAccessKey(s);
    const auth = { authorization: `Bearer ${key}` };
    const acknowledged = new Set<string>();
    let connectionFailures = 0;
    let stop = false;
    const client = async (c: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const id = idOf(c, i);
        // Re-sent until acknowledged, as an agent's spool does: the same ID, the same line.
        for (;;) {
          try {
            const r = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: `${buildLine(id, eventsOf(id))}\n` });
            const body = (await r.json()) as { results?: { status: string }[] };
            if (r.status === 200 && ['stored', 'unchanged'].includes(body.results?.[0]?.status ?? '')) {
              acknowledged.add(id);
              break;
            }
          } catch {
            connectionFailures++;
          }
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    };
    try {
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
      const killed: number[] = [];
      for (let k = 0; k < KILLS; k++) {
        const before = acknowledged.size;
        while (acknowledged.size < before + 30) await new Promise((res) => setTimeout(res, 20));
        const workers = serverChildren(s.child.pid!);
        expect(workers).toHaveLength(2);
        process.kill(workers[k % 2]!, 'SIGKILL');
        killed.push(workers[k % 2]!);
        // Until the replacement listens.
        for (let i = 0; i < 300; i++) {
          const now = serverChildren(s.child.pid!);
          if (now.length === 2 && !now.some((p) => killed.includes(p))) break;
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      const after = acknowledged.size;
      while (acknowledged.size < after + 20) await new Promise((res) => setTimeout(res, 20));
      stop = true;
      await Promise.all(clients);

      // Every build stored, acknowledged or not (a client's last try may have been stored while its
      // answer was lost), is whole: all of its events.
      const listed: { id: string }[] = [];
      for (let from = ''; ; ) {
        const r = await fetch(`${s.url}/api/builds?since=0&maxBuilds=1000${from ? `&fromBuild=${from}` : ''}`, { headers: auth });
        expect(r.status).toBe(200);
        const page = (await r.json()) as { id: string }[];
        listed.push(...page);
        if (page.length < 1000) break;
        from = page.at(-1)!.id;
      }
      const ids = new Set(listed.map((b) => b.id));
      expect(ids.size).toBe(listed.length);
      for (const id of acknowledged) expect(ids.has(id), `acknowledged build ${id} is missing`).toBe(true);
      for (const id of ids) {
        const r = await fetch(`${s.url}/api/builds/${id}/events?limit=1`, { headers: auth });
        expect(r.status).toBe(200);
        expect(((await r.json()) as { total: number }).total, `events of ${id}`).toBe(eventsOf(id) + 3);
      }
      console.log(`${name}: ${acknowledged.size} builds acknowledged, ${ids.size} stored, ${KILLS} workers killed with SIGKILL, ${connectionFailures} requests cut off and re-sent`);
      expect(await s.stop()).toBe(0);
    } finally {
      stop = true;
      if (s.child.exitCode === null) await s.stop();
    }
  });
});
