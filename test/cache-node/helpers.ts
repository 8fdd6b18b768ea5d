// Shared setup of the cache node tests: a node on 127.0.0.1 (real HTTP) over a temporary data
// directory, configured by a real file.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startCacheNode, type CacheNode } from '../../src/cache-node/server.js';
import { hashSecret } from '../../src/cache-node/secret.js';
import type { Logger } from '../../src/log.js';

/** Cheap scrypt parameters: the tests hash many secrets; the node reads parameters from the hash. */
export const fastHash = (secret: string) => hashSecret(secret, { logN: 4, r: 1, p: 1 });

export interface LogCapture {
  readonly logger: Logger;
  readonly lines: { level: number; msg: string; [k: string]: unknown }[];
}

export function captureLogs(): LogCapture {
  const lines: LogCapture['lines'] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as LogCapture['lines'][number]);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

export interface TestNode {
  node: CacheNode;
  dir: string;
  configFile: string;
  logs: LogCapture;
  writeConfig(config: unknown): void;
  restart(extra?: Partial<Parameters<typeof startCacheNode>[0]>): Promise<CacheNode>;
  close(): Promise<void>;
}

export async function startTestNode(config: unknown, extra: Partial<Parameters<typeof startCacheNode>[0]> = {}): Promise<TestNode> {
  const dir = mkdtempSync(join(tmpdir(), 'cache-node-test-'));
  const configFile = join(dir, 'config', 'node.json');
  const writeConfig = (c: unknown) => {
    writeFileSync(configFile, JSON.stringify(c, null, 2));
  };
  rmSync(join(dir, 'config'), { recursive: true, force: true });
  await import('node:fs/promises').then((f) => f.mkdir(join(dir, 'config')));
  writeConfig(config);
  const logs = captureLogs();
  const start = (more: Partial<Parameters<typeof startCacheNode>[0]>) =>
    startCacheNode({ configFile, dataDir: join(dir, 'data'), port: 0, watch: false, logger: logs.logger, ...extra, ...more });
  const t: TestNode = {
    node: await start({}),
    dir,
    configFile,
    logs,
    writeConfig,
    async restart(more = {}) {
      await t.node.close();
      t.node = await start(more);
      return t.node;
    },
    async close() {
      await t.node.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
