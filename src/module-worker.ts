// Worker threads (the store's search reads, ingest preparation and test pack folds) start from a
// module next to the code that starts them: a .js file of the compiled package, or, from the
// TypeScript sources (tests, benchmarks), the .ts file after registering tsx's loader (a
// development dependency), which a worker does not inherit from its parent thread.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker running module `name` (without extension) beside the module whose import.meta.url is `from`. */
export function startModuleWorker(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options);
  // The ESM build of tsx's API, next to the CommonJS file that require() resolves.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const main = new URL(`./${name}.ts`, from).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(main)}); });`, { ...options, eval: true });
}
