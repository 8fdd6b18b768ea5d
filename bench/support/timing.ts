// Times of a benchmark step: one untimed run first (plans, caches, threads), then `iterations`
// timed runs; the median and the range, in ms to a tenth.

export interface Timing {
  /** The untimed first run (a cold cache, plan or term). */
  readonly first: number;
  readonly p50: number;
  readonly min: number;
  readonly max: number;
}

export async function timed(fn: () => Promise<unknown>, iterations: number): Promise<Timing> {
  const t0 = performance.now();
  await fn();
  const first = performance.now() - t0;
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const ms = (x: number) => +x.toFixed(1);
  return { first: ms(first), p50: ms(times[Math.floor((times.length - 1) / 2)]!), min: ms(times[0]!), max: ms(times.at(-1)!) };
}
