// kill -9 of a server process while clients publish builds over HTTP, with `serve --workers 2`
// (two processes writing one database), on SQLite and PostgreSQL. Every build the server
// acknowledged is there and whole after the crash; no build is half-stored; the clients' retries
// of what was not acknowledged store each build once. And a worker that stops answering strands no
// connection: the workers take connections from the socket themselves (src/workers.ts).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, pgAvailable, type TestDatabase } from '../support/postgres.js';
import { printedAccessKey, serve, serverChildren } from '../support/serve-cli.js';
import { waitFor } from '../support/wait.js';
import { event, ingestLine } from '../support/lines.js';

vi.setConfig({ testTimeout: 300_000 });

const CLIENTS = 4;
/** Kills, one after the other, each after the replacement of the one before listens. */
const KILLS = 2;

/** A build with `n` task events, so a half-stored build would show in its event count. */
function buildLine(id: string, n: number): string {
  const t0 = 1_790_000_000_000;
  const events = [event(t0, 'BuildStarted'), event(t0 + 1, 'ProjectStructure', { rootProjectName: 'crash' })];
  for (let i = 0; i < n; i++) events.push(event(t0 + 10 + i, 'TaskFinished', { path: `:t${i}`, outcome: 'success', cacheable: false }));
  events.push(event(t0 + 60_000, 'BuildFinished', { outcome: 'succeeded', failures: [] }));
  return ingestLine(id, events);
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
            // Bounded, as an agent's request is: one answered by no worker is cut off and re-sent.
            const r = await fetch(`${s.url}/api/builds`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: `${buildLine(id, eventsOf(id))}\n`, signal: AbortSignal.timeout(30_000) });
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
    /** Waits until `n` builds are acknowledged; a stall fails with what the workers were doing instead of the test's time limit. */
    const acknowledgedBeyond = (n: number): Promise<void> =>
      waitFor(() => acknowledged.size >= n, `${n} builds acknowledged`, 120_000).catch(() => {
        throw new Error(`${acknowledged.size} of ${n} builds acknowledged after 120 s; ${connectionFailures} requests cut off; workers ${JSON.stringify(serverChildren(s.child.pid!))}; last server lines: ${JSON.stringify(s.lines.slice(-20))}`);
      });
    try {
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
      const killed: number[] = [];
      for (let k = 0; k < KILLS; k++) {
        const before = acknowledged.size;
        await acknowledgedBeyond(before + 30);
        const workers = serverChildren(s.child.pid!);
        expect(workers).toHaveLength(2);
        process.kill(workers[k % 2]!, 'SIGKILL');
        killed.push(workers[k % 2]!);
        // Until the replacement listens.
        await waitFor(
          () => {
            const now = serverChildren(s.child.pid!);
            return now.length === 2 && !now.some((p) => killed.includes(p));
          },
          'a replacement of the killed worker',
          120_000,
          100,
        );
      }
      const after = acknowledged.size;
      await acknowledgedBeyond(after + 20);
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

describe('a worker that stops answering, with `serve --workers 2`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-stopped-worker-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** GET over a new connection of its own, answered or not within `ms`. */
  const getOnNewConnection = (url: string, headers: Record<string, string>, ms: number): Promise<number | 'no answer'> =>
    new Promise((resolve) => {
      const req = httpGet(url, { headers, agent: false, timeout: ms }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      req.once('timeout', () => {
        req.destroy();
        resolve('no answer');
      });
      req.once('error', () => resolve('no answer'));
    });

  it('leaves no connection to it unanswered: the other worker takes them all', async () => {
    const s = await serve(['--data', dir, '--workers', '2']);
    const auth = { authorization: `Bearer ${printedAccessKey(s)}` };
    let stoppedWorker: number | undefined;
    try {
      const workers = serverChildren(s.child.pid!);
      expect(workers).toHaveLength(2);
      stoppedWorker = workers[0]!;
      process.kill(stoppedWorker, 'SIGSTOP');
      // Each on a new connection: were connections handed out by the primary in turn, every
      // second one would go to the stopped worker and wait there, and after it dies, for good.
      const answers: (number | 'no answer')[] = [];
      for (let i = 0; i < 6; i++) answers.push(await getOnNewConnection(`${s.url}/api/builds?since=0`, auth, 20_000));
      process.kill(stoppedWorker, 'SIGKILL');
      for (let i = 0; i < 4; i++) answers.push(await getOnNewConnection(`${s.url}/api/builds?since=0`, auth, 20_000));
      expect(answers).toEqual(Array.from({ length: 10 }, () => 200));
      expect(await s.stop()).toBe(0);
    } finally {
      if (stoppedWorker !== undefined) {
        try {
          process.kill(stoppedWorker, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (s.child.exitCode === null) await s.stop();
    }
  });
  it('a shutdown ends within stopTimeoutSeconds even when a worker cannot stop: it is killed and the status is 1', async () => {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'server:\n  stopTimeoutSeconds: 2\n');
    const s = await serve(['--data', dir, '--workers', '2', '--config', config]);
    const workers = serverChildren(s.child.pid!);
    try {
      expect(workers).toHaveLength(2);
      process.kill(workers[0]!, 'SIGSTOP');
      const stopping = Date.now();
      expect(await s.stop()).toBe(1);
      // Well before the test's own limit, whatever the machine's load: the timeout ended it.
      expect(Date.now() - stopping).toBeLessThan(60_000);
      for (const pid of workers) expect(() => process.kill(pid, 0), `process ${pid} is gone`).toThrow();
    } finally {
      for (const pid of workers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (s.child.exitCode === null) await s.stop();
    }
  });
});
