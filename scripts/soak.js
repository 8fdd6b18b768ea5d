#!/usr/bin/env node
// `npm run soak`: the long versions of the reliability suites (test/reliability/): many fuzz runs
// per operation, more slow readers, more wrong passwords. Each suite prints its counts (requests
// per operation, 5xx, hangs, memory per slow reader, latency of an unrelated request); every
// default below can be overridden by the environment variable of the same name.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const defaults = {
  FUZZ_RUNS: '2000',
  SLOW_READERS: '50',
  SLOW_READER_EVENTS: '250005',
  WRONG_PASSWORD_CLIENTS: '128',
};
const env = { ...process.env };
for (const [k, v] of Object.entries(defaults)) env[k] ??= v;
console.log(`soak: ${Object.keys(defaults).map((k) => `${k}=${env[k]}`).join(' ')}`);

const require = createRequire(import.meta.url);
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
// One file at a time: the suites measure memory and latency, which a parallel file would disturb.
const r = spawnSync(process.execPath, [vitest, 'run', 'test/reliability', '--maxWorkers=1', '--silent=false', ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
