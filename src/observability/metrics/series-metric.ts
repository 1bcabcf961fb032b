import type { Metric, Registry } from 'prom-client';

export interface SeriesMetricConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** One label set's state in a SeriesMetric. */
export interface LabelledSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Recorded into since it was made or last reset: only such series are exposed, as prom-client does. */
  readonly touched: boolean;
  /** Back to nothing recorded (a registry reset). */
  clear(): void;
}

/** One exposed sample, as prom-client's registry reads it from `get()`. */
export interface ExposedValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A Prometheus metric whose label sets are resolved into series objects once, by whoever records
 * into them often. prom-client validates and hashes the label set on every `inc` and `observe`
 * (docs/benchmarks.md has its cost); a caller that keeps the series (a stream, a route) pays that once.
 * The exposition is prom-client's own, through the same registry: a series shows once something
 * was recorded into it, and a reset zeroes and hides every series in place, so that series kept
 * by callers stay the metric's own.
 */
export abstract class SeriesMetric<L extends string, S extends LabelledSeries> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  private readonly labelNames: readonly L[];
  private readonly bySeries = new Map<string, S>();

  constructor(config: SeriesMetricConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of a label set, created on first use; keep it to record into it directly. */
  series(labels: Readonly<Record<L, string>>): S {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000');
    let series = this.bySeries.get(key);
    if (!series) {
      series = this.create(Object.fromEntries(this.labelNames.map((name) => [name, labels[name]])));
      this.bySeries.set(key, series);
    }
    return series;
  }

  reset(): void {
    for (const series of this.bySeries.values()) series.clear();
  }

  /** What prom-client's registry reads to expose the metric. */
  async get() {
    const values: ExposedValue[] = [];
    for (const series of this.bySeries.values()) if (series.touched) this.expose(series, values);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  protected abstract create(labels: Readonly<Record<string, string>>): S;
  protected abstract expose(series: S, values: ExposedValue[]): void;
}
