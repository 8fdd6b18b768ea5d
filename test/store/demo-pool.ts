// Demo builds with fresh IDs, handed out a few at a time: for the property tests that ingest
// between other steps (the builds start over the 30 days before `now`).

import { demoBuilds } from '../../src/store/demo/demo-data.js';

/** The next `n` lines (fewer when the pool of `size` builds runs out); IDs `prefix` + a counter. */
export function demoPool(options: { seed: number; now: number; prefix: string; size?: number }): (n: number) => string[] {
  let counter = 0;
  const pool = (function* () {
    for (const l of demoBuilds({ builds: options.size ?? 20_000, seed: options.seed, now: options.now })) {
      counter++;
      yield l.replace(/"buildId":"[0-9a-z]{13}"/, `"buildId":"${options.prefix}${counter.toString(36).padStart(12, '0')}"`);
    }
  })();
  return (n) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const next = pool.next();
      if (next.done) break;
      out.push(next.value);
    }
    return out;
  };
}
