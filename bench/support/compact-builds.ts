// Compact builds for the benchmarks that need many (start, agent, project, tags, outcome, with the
// value distributions of the demo data, so that 1M builds load in minutes), loaded through the
// store into a data directory, and the compiled server over it, as `npm start` runs it.

import { spawn, type ChildProcess } from 'node:child_process';
import { openDatabase } from '../../src/db/database.js';
import { openBuildStore } from '../../src/store/build-store.js';

export interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly key: string | undefined;
}

const PROJECTS = ['payments-service', 'Checkout-Web', 'inventory', 'mobile-app', 'data-pipeline', 'auth-gateway', 'search-indexer', 'billing', 'ml-platform', 'docs-site'];
const USERS = ['alice', 'bob', 'carol', 'dmitri', 'eve', 'farah', 'guo', 'hana', 'ci', 'jenkins', 'renee'];
const TAGS = ['nightly', 'release', 'pr', 'main', 'feature', 'dirty', 'flaky-retry'];
const TOOLS = ['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild'];

export function* benchBuilds(count: number): Iterable<string> {
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const start0 = Date.UTC(2026, 0, 1);
  for (let i = 0; i < count; i++) {
    const t = start0 + i * 30_000;
    const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    const events = [
      ev(t, 'BuildStarted', {}),
      ev(t + 1, 'BuildAgent', { username: pick(USERS), publicHostname: `build-${1 + Math.floor(rnd() * 20)}.ci.example.com` }),
      ev(t + 2, 'ProjectStructure', { rootProjectName: pick(PROJECTS) }),
      ev(t + 3, 'UserTag', { tag: rnd() < 0.5 ? 'CI' : 'LOCAL' }),
      ev(t + 4, 'UserTag', { tag: pick(TAGS) }),
      ev(t + 5_000 + Math.floor(rnd() * 600_000), 'BuildFinished', { outcome: rnd() < 0.15 ? 'failed' : 'succeeded', failures: [] }),
    ];
    yield JSON.stringify({ buildId: `b${i.toString(36).padStart(12, '0')}`, toolType: pick(TOOLS), toolVersion: '8.10.2', agentVersion: '3.19', events }) + '\n';
  }
}

/** Where the builds go: a SQLite data directory, or a postgres:// URL. */
export type Where = string | { readonly url: string };

const section = (where: Where) => (typeof where === 'string' ? { data: where } : { url: where.url });

export async function loadBuilds(where: Where, count: number): Promise<void> {
  const database = await openDatabase(section(where));
  const store = await openBuildStore(database);
  try {
    const have = await store.latestSeq();
    if (have >= count) return;
    process.stderr.write(`loading ${count} builds...\n`);
    const started = Date.now();
    let last = 0;
    await store.ingestNdjson(
      (async function* () {
        yield* benchBuilds(count);
      })(),
      {
        onProgress(done) {
          if (done - last >= count / 10) {
            last = done;
            process.stderr.write(`  ${done}/${count} (${Math.round((Date.now() - started) / 1000)} s)\n`);
          }
        },
      },
    );
    process.stderr.write(`loaded ${count} builds in ${Math.round((Date.now() - started) / 1000)} s\n`);
  } finally {
    await store.close();
    await database.close();
  }
}

/**
 * `serve` over `data` (dist/ must be built); `extra`: more command-line options, e.g. --config FILE.
 * `onLog`: each line of the server's log (standard error) from its first, before it listens.
 */
export function startServer(where: Where, workers: number, extra: readonly string[] = [], onLog?: (line: string) => void): Promise<Server> {
  const store = typeof where === 'string' ? ['--data', where] : ['--db', where.url];
  return new Promise((resolve, reject) => {
    // The server as `npm start` runs it: the compiled dist/ (built first, below), not the sources
    // through tsx, whose transform slows closure-heavy code down.
    const child = spawn(process.execPath, ['bin/buildscope.js', 'serve', '--port', '0', ...store, '--workers', String(workers), ...extra], {
      env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let key: string | undefined;
    if (onLog === undefined) child.stderr!.resume();
    else {
      let partial = '';
      child.stderr!.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const l of lines) onLog(l);
      });
    }
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const k = /access key (bsk[a-z2-7]{52}|bsk_[A-Za-z0-9_-]{40})/.exec(out);
      if (k) key = k[1];
      const m = /Buildscope is running at (http:\/\/[^/\s]+)\//.exec(out);
      if (m) resolve({ child, url: m[1]!, key });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

