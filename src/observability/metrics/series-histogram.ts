import { SeriesMetric, type ExposedValue, type LabelledSeries, type SeriesMetricConfig } from './series-metric.js';

/** One label set's buckets of a SeriesHistogram: observing is a bucket search and three additions. */
export class HistogramSeries implements LabelledSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  touched = false;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    this.touched = true;
    this.sum += value;
    this.count += 1;
    const bounds = this.bounds;
    for (let index = 0; index < bounds.length; index += 1) {
      if (value <= bounds[index]) {
        this.counts[index] += 1;
        return;
      }
    }
  }

  clear(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
    this.touched = false;
  }
}

export interface SeriesHistogramConfig<L extends string> extends SeriesMetricConfig<L> {
  buckets: readonly number[];
}

/**
 * A Prometheus histogram whose series are resolved once (see SeriesMetric): it is observed on
 * every streamed token, where resolving the label set each time would be most of the cost. The
 * exposition is prom-client's (`_bucket` with cumulative `le` counts and `+Inf`, `_sum`, `_count`).
 */
export class SeriesHistogram<L extends string> extends SeriesMetric<L, HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(config: SeriesHistogramConfig<L>) {
    super(config);
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    this.series(labels).observe(value);
  }

  protected create(labels: Readonly<Record<string, string>>): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  protected expose(series: HistogramSeries, values: ExposedValue[]): void {
    let cumulative = 0;
    this.bounds.forEach((bound, index) => {
      cumulative += series.counts[index];
      values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative });
    });
    values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count });
    values.push({ metricName: `${this.name}_sum`, labels: { ...series.labels }, value: series.sum });
    values.push({ metricName: `${this.name}_count`, labels: { ...series.labels }, value: series.count });
  }
}
