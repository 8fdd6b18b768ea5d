// The server's Prometheus metrics (prom-client): requests by route and status with latency
// histograms, requests in flight by route (export streams and long-polls are requests that stay
// in flight), the requests waiting for a new build, builds stored and rejected, and the database's
// size. One registry per server, so several servers in one process (tests) never share counters.
// docs/operations.md lists them.

import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabaseHandle } from '../db/database.js';
import type { IngestLineResult } from '../store/types.js';

export interface ServerMetrics {
  readonly registry: Registry;
  /** Called when a request arrives; the returned function when its response is finished or cut. */
  startRequest(method: string, route: string): (status: number) => void;
  /** The results of one committed ingest batch. */
  recordIngest(results: readonly IngestLineResult[]): void;
}

/** Latency buckets in seconds: from a cached page (1 ms) to a long-poll's longest wait (20 s). */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

/** Routes whose requests are long-lived streams of the export API. */
const isExportStream = (route: string): boolean => route.startsWith('/build-export/');

/**
 * `waitingForNewBuilds`: how many requests wait for a new build now (the store's
 * `waitingForNewBuilds`; a function, as the server makes its metrics before it opens the store).
 */
export function createServerMetrics(database: DatabaseHandle, waitingForNewBuilds: () => number = () => 0): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'buildscope_' });
  const requests = new Counter({ name: 'buildscope_http_requests_total', help: 'HTTP requests answered, by route, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 'buildscope_http_request_duration_seconds', help: 'Time from a request to the end of its response, by route, method and status', labelNames: ['route', 'method', 'status'], buckets: BUCKETS, registers: [registry] });
  const inFlight = new Gauge({ name: 'buildscope_http_requests_in_flight', help: 'Requests being answered, by route and method', labelNames: ['route', 'method'], registers: [registry] });
  let exportStreams = 0;
  let longPolls = 0;
  new Gauge({ name: 'buildscope_export_streams_open', help: 'Requests of the build export API in flight (SSE streams)', registers: [registry], collect() { this.set(exportStreams); } });
  new Gauge({ name: 'buildscope_builds_requests_waiting', help: 'GET /api/builds requests in flight (long-polls waiting for new builds among them)', registers: [registry], collect() { this.set(longPolls); } });
  new Gauge({
    name: 'buildscope_new_build_waiters',
    help: 'Requests waiting for a new build to become available: long-polls of GET /api/builds that found none, export streams that sent every build',
    registers: [registry],
    collect() {
      this.set(waitingForNewBuilds());
    },
  });
  const stored = new Counter({ name: 'buildscope_builds_stored_total', help: 'Ingested lines stored (new builds and new parts of builds)', registers: [registry] });
  const unchanged = new Counter({ name: 'buildscope_builds_unchanged_total', help: 'Ingested lines already stored with the same content', registers: [registry] });
  const rejected = new Counter({ name: 'buildscope_builds_rejected_total', help: 'Ingested lines rejected', registers: [registry] });
  new Gauge({
    name: 'buildscope_database_size_bytes',
    help: 'Size of the database: the SQLite file with its WAL, or pg_database_size of the PostgreSQL database',
    registers: [registry],
    async collect() {
      this.set(await databaseSize(database));
    },
  });

  return {
    registry,
    startRequest(method, route) {
      const end = duration.startTimer({ route, method });
      inFlight.inc({ route, method });
      const stream = isExportStream(route);
      const poll = method === 'GET' && route === '/api/builds';
      if (stream) exportStreams++;
      if (poll) longPolls++;
      let done = false;
      return (status) => {
        if (done) return;
        done = true;
        inFlight.dec({ route, method });
        if (stream) exportStreams--;
        if (poll) longPolls--;
        end({ status: String(status) });
        requests.inc({ route, method, status: String(status) });
      };
    },
    recordIngest(results) {
      for (const r of results) {
        switch (r.status) {
          case 'stored':
            stored.inc();
            break;
          case 'unchanged':
            unchanged.inc();
            break;
          case 'rejected':
            rejected.inc();
            break;
        }
      }
    },
  };
}

async function databaseSize(database: DatabaseHandle): Promise<number> {
  if (database.dialect === 'sqlite') {
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(database.describe + suffix).size;
      } catch {
        // No WAL file between checkpoints.
      }
    }
    return total;
  }
  const r = await sql<{ size: number }>`SELECT pg_database_size(current_database()) AS size`.execute(database.db);
  return Number(r.rows[0]?.size ?? 0);
}
