// Several server processes on one port (`server.workers`, `serve --workers N`) with node:cluster.
// The primary does the first-start work once (prepareServer), then starts the workers, each a
// whole server over the same database, and prints where to go when all of them listen. It
// replaces a worker that dies, and on SIGINT/SIGTERM stops them all and exits.
//
// Why: one Node process uses one core. Every request is independent and everything that matters
// is in the database (SQLite in WAL mode serves concurrent readers; PostgreSQL any number of
// clients), so more processes serve more requests; a new build wakes waiters in other processes
// through PostgreSQL notifications or, on SQLite, the store's one-second poll.

import cluster, { type Worker } from 'node:cluster';
import { prepareServer, printToStdout, startupLines, type RunningServer, type StartOptions } from './server.js';
import type { Logger } from './log.js';

interface Listening {
  readonly kind: 'listening';
  readonly url: string;
}

const isListening = (m: unknown): m is Listening => typeof m === 'object' && m !== null && (m as Listening).kind === 'listening';

/**
 * In a worker, from its first moment: closes when the primary says so (a message rather than a
 * signal: a terminal's Ctrl+C already signals every process of the group, and a second signal
 * would make a worker exit without closing). The primary sends it only to workers that reported
 * listening; one still starting gets SIGTERM.
 */
export function stopWhenAsked(stop: (reason: string) => void): void {
  process.on('message', (m: unknown) => {
    if (typeof m === 'object' && m !== null && (m as { kind?: unknown }).kind === 'stop') stop('stop');
  });
}

/** In a worker: tells the primary that this process listens. */
export function reportListening(server: RunningServer): void {
  process.send?.({ kind: 'listening', url: server.url } satisfies Listening);
}

/** In the primary: prepares the data, starts `count` workers, and supervises them until a signal. */
export async function runPrimary(options: StartOptions & { readonly logger: Logger }, count: number): Promise<void> {
  const { logger } = options;
  const stopTimeoutSeconds = options.config.server.stopTimeoutSeconds;
  const print = options.print ?? printToStdout;
  const { created, playground } = await prepareServer(options);
  let stopping = false;
  let announced = false;
  const listening = new Set<Worker>();
  // Our own record: cluster.workers drops a worker only once both its exit and its disconnect
  // were seen, in either order, so it cannot tell on 'exit' whether this was the last one.
  const alive = new Set<Worker>();

  const start = (): void => {
    const worker = cluster.fork();
    alive.add(worker);
    worker.on('message', (m: unknown) => {
      if (!isListening(m)) return;
      listening.add(worker);
      if (!announced && listening.size === count) {
        announced = true;
        logger.info({ workers: count }, 'every server process listens');
        for (const line of startupLines(m.url, created, playground)) print(line);
      }
    });
    worker.on('exit', (code, signal) => {
      listening.delete(worker);
      alive.delete(worker);
      if (!stopping && !announced) {
        // It did not get as far as listening (a port in use, a bad database): so would the next.
        logger.error({ pid: worker.process.pid, code, signal }, 'a server process could not start; stopping');
        process.exitCode = 1;
        stop('SIGTERM');
      }
      if (stopping) {
        if (alive.size === 0) process.exit();
        return;
      }
      logger.error({ pid: worker.process.pid, code, signal }, 'a server process ended; starting another');
      start();
    });
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1); // a second signal: at once
    stopping = true;
    logger.info({ signal }, 'shutting down every server process');
    if (alive.size === 0) process.exit();
    // Each worker ends its own shutdown after stopTimeoutSeconds; one that cannot (stopped, or
    // busy in one long synchronous call) is killed a little later, and the primary exits with 1.
    setTimeout(() => {
      const left = [...alive].map((w) => w.process.pid);
      logger.error({ pids: left, stopTimeoutSeconds }, `${left.length} server process(es) did not stop in time; killing them`);
      process.exitCode = 1;
      for (const w of alive) w.process.kill('SIGKILL');
    }, (stopTimeoutSeconds + 2) * 1000).unref();
    // A worker still starting may not listen for messages yet: a signal stops it either way.
    for (const w of alive) {
      if (listening.has(w) && w.isConnected()) w.send({ kind: 'stop' });
      else w.process.kill('SIGTERM');
    }
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  // The workers accept connections themselves from the one listening socket (SCHED_NONE), not
  // through the primary (round-robin, Node's default elsewhere than Windows). With round-robin the
  // primary accepts each connection and hands it to a worker; a worker that dies before it took
  // the connection leaves it open in the primary for good, unanswered, and its client waits until
  // its own timeout. A connection still waiting in the socket's queue is taken by another worker.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  for (let i = 0; i < count; i++) start();
}
