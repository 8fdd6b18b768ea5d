// Whole numbers held in small typed arrays, the few that do not fit beside them: the analytics
// index's task counts and task durations (analytics-index.ts, task-blocks.ts).

/** The value of a byte array that says "beside the array". */
export const SMALL_MARK = 0xff;
/** The same for a 32-bit array. */
export const LARGE_MARK = 0xffffffff;

/** `a`, or a copy at least `need` long (a quarter more than before at least) with its values. */
export function grow<T extends Uint8Array | Uint32Array | Float64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const grown = new (a.constructor as new (n: number) => T)(Math.max(need, Math.ceil(a.length * 1.25), 1024));
  grown.set(a);
  return grown;
}

/**
 * Whole numbers that mostly fit a small typed array (task counts fit a byte, task durations 32
 * bits), the few that do not (and fractions) in a map beside it: a task count of 300 or a task
 * of seven weeks must still sum exactly as SQL sums it.
 */
export class SmallNumbers<T extends Uint8Array | Uint32Array> {
  private readonly big = new Map<number, number>();
  /** The value that says "beside the array": the largest the array holds. */
  readonly mark: number;

  constructor(public data: T) {
    this.mark = data instanceof Uint8Array ? SMALL_MARK : LARGE_MARK;
  }

  set(i: number, v: number): void {
    if (Number.isInteger(v) && v >= 0 && v < this.mark) {
      this.data[i] = v;
      if (this.big.size > 0) this.big.delete(i);
      return;
    }
    this.data[i] = this.mark;
    this.big.set(i, v);
  }

  get(i: number): number {
    const v = this.data[i]!;
    return v === this.mark ? this.big.get(i)! : v;
  }

  grow(need: number): void {
    this.data = grow(this.data, need);
  }

  clear(): void {
    this.big.clear();
  }
}
