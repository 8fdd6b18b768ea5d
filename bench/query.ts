// Throughput of parse+check (parseQuery) for 1-, 5- and 10-term queries, against liqe parsing the
// equivalent Lucene-style queries in the same run.
//
//   node --import tsx bench/query.ts [--quick]
//
// Prints a table and writes bench/results/query.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { parse as liqeParse } from 'liqe';

// The code under test is src/query bundled by esbuild, as the playground ships it (and as tsc's
// output behaves): running it through tsx directly would measure tsx's transform instead, which
// wraps every closure in a `__name()` call and slows a closure-heavy chevrotain parser ~3x.
const bundle = fileURLToPath(new URL('../node_modules/.cache/buildscope-bench/query.mjs', import.meta.url));
await build({
  entryPoints: [fileURLToPath(new URL('../src/query/index.ts', import.meta.url))],
  bundle: true,
  format: 'esm',
  platform: 'node',
  outfile: bundle,
  logLevel: 'warning',
});
const { parseQuery } = (await import(pathToFileURL(bundle).href)) as typeof import('../src/query/index.js');

const quick = process.argv.includes('--quick');
const NOW = Date.UTC(2024, 5, 15);

const CORPUS = [
  {
    terms: 1,
    query: 'buildOutcome:failed',
    lucene: 'buildOutcome:failed',
  },
  {
    terms: 5,
    query: 'buildOutcome:failed buildStartTime>-7d (tag:CI or tag:nightly) -user:bot',
    lucene: 'buildOutcome:failed AND buildStartTime:>2024-06-08 AND (tag:CI OR tag:nightly) AND NOT user:bot',
  },
  {
    terms: 10,
    query:
      'buildOutcome:failed buildStartTime>-7d (tag:CI or tag:nightly) -user:bot project:my-app* buildDuration:[1m to 5m30s] value:"CI Provider=GitHub*" native.environment.jvmMaxMemoryHeapSize>=2gib hasVerificationFailure',
    lucene:
      'buildOutcome:failed AND buildStartTime:>2024-06-08 AND (tag:CI OR tag:nightly) AND NOT user:bot AND project:my-app* AND buildDuration:[60000 TO 330000] AND value:"CI Provider=GitHub*" AND native.environment.jvmMaxMemoryHeapSize:>=2147483648 AND hasVerificationFailure:true',
  },
] as const;

/** Operations per second of `fn` during `ms` milliseconds. */
function measure(fn: () => unknown, ms: number): number {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (let i = 0; i < 50; i++) fn();
    ops += 50;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return (ops / elapsed) * 1000;
}

/**
 * Best ops/s of `a` and `b` over `rounds` rounds, measured alternately: on a shared machine the
 * load changes from second to second, and alternating keeps the ratio fair.
 */
function compare(a: () => unknown, b: () => unknown, ms: number, rounds: number): [number, number] {
  measure(a, ms / 2);
  measure(b, ms / 2);
  let bestA = 0;
  let bestB = 0;
  for (let r = 0; r < rounds; r++) {
    bestA = Math.max(bestA, measure(a, ms));
    bestB = Math.max(bestB, measure(b, ms));
  }
  return [bestA, bestB];
}

const ms = quick ? 150 : 500;
const rounds = quick ? 3 : 10;

// Both sides must accept their query, or the comparison is meaningless.
for (const c of CORPUS) {
  const r = parseQuery(c.query, { now: NOW });
  if (!r.ok) throw new Error(`${c.query}: ${r.diagnostics.map((d) => d.message).join('; ')}`);
  liqeParse(c.lucene);
}

// Warm the JIT on every query first, so the first row is not measured while code is still being optimised.
const warmUntil = performance.now() + (quick ? 1000 : 3000);
while (performance.now() < warmUntil) {
  for (const c of CORPUS) {
    for (let i = 0; i < 20; i++) parseQuery(c.query, { now: NOW });
    liqeParse(c.lucene);
  }
}

const rows = CORPUS.map((c) => {
  const [buildscope, liqe] = compare(() => parseQuery(c.query, { now: NOW }), () => liqeParse(c.lucene), ms, rounds);
  return { terms: c.terms, query: c.query, lucene: c.lucene, buildscopeOpsPerSec: Math.round(buildscope), liqeOpsPerSec: Math.round(liqe), ratio: Number((buildscope / liqe).toFixed(1)) };
});

const fmt = (n: number) => n.toLocaleString('en-US');
console.log(`parse+check (buildscope) vs parse (liqe), ops/s, best of ${rounds} alternating rounds of ${ms} ms${quick ? ' (quick)' : ''}`);
console.log('| terms | buildscope parse+check | liqe parse | ratio |');
console.log('|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.terms} | ${fmt(r.buildscopeOpsPerSec)} | ${fmt(r.liqeOpsPerSec)} | ${r.ratio}x |`);
const five = rows.find((r) => r.terms === 5)!;
console.log(`goal: 5-term parse+check >= 100x liqe: ${five.ratio >= 100 ? 'met' : 'not met'} (${five.ratio}x)`);

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('./results/query.json', import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model, quick, ms, rounds, rows }, null, 2)}\n`,
);
