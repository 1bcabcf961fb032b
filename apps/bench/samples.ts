/**
 * Nearest-rank percentile of ascending `sorted` values: the smallest value with at least `p`
 * percent of the values at or below it. Undefined when there are none.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  if (p <= 0) return sorted[0];
  const rank = Math.ceil((Math.min(p, 100) / 100) * sorted.length);
  return sorted[rank - 1];
}

export interface SampleSummary {
  count: number;
  mean?: number;
  p50?: number;
  p90?: number;
  p99?: number;
  max?: number;
}

/**
 * A bounded collection of measurements (milliseconds, or anything else). Past `capacity` values
 * the rest are counted in `dropped`, not kept, so no loop of the benchmark can grow it without end.
 */
export class Samples {
  private values: Float64Array;
  private size = 0;
  private sorted?: Float64Array;
  dropped = 0;

  constructor(private readonly capacity = 2_000_000) {
    this.values = new Float64Array(Math.min(1024, capacity));
  }

  get count(): number {
    return this.size;
  }

  add(value: number): void {
    if (this.size === this.capacity) {
      this.dropped += 1;
      return;
    }
    if (this.size === this.values.length) {
      const grown = new Float64Array(Math.min(this.capacity, this.values.length * 2));
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = value;
    this.sorted = undefined;
  }

  percentile(p: number): number | undefined {
    this.sorted ??= this.values.slice(0, this.size).sort();
    return percentile(this.sorted, p);
  }

  summary(): SampleSummary {
    if (this.size === 0) return { count: 0 };
    let sum = 0;
    for (let index = 0; index < this.size; index += 1) sum += this.values[index];
    return {
      count: this.size,
      mean: sum / this.size,
      p50: this.percentile(50),
      p90: this.percentile(90),
      p99: this.percentile(99),
      max: this.percentile(100),
    };
  }
}
