// Runs the benchmarks one after another, each in its own process (they measure memory and start
// servers): `npm run bench` runs all of them, `npm run bench -- query search --quick` the named
// ones; options after the names are passed to each. Every benchmark prints its table and writes
// bench/results/<name>.json.

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();
const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('-') && all.includes(a));
const unknown = args.filter((a) => !a.startsWith('-') && !all.includes(a) && !/^\d+$/.test(a));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${all.join(', ')}\n`);
  process.exit(2);
}
const options = args.filter((a) => !named.includes(a));
let failed = 0;
for (const name of named.length > 0 ? named : all) {
  process.stdout.write(`\n=== bench/${name}.ts ${options.join(' ')}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...options], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
