import { SeriesMetric, type ExposedValue, type LabelledSeries } from './series-metric.js';

/** One label set's value of a SeriesCounter or SeriesGauge. */
export class ValueSeries implements LabelledSeries {
  value = 0;
  touched = false;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly monotonic: boolean,
  ) {}

  inc(by = 1): void {
    // A counter takes no negative or non-finite step (prom-client would throw inside a hook).
    if (this.monotonic && !(by >= 0 && by < Infinity)) return;
    this.value += by;
    this.touched = true;
  }

  dec(by = 1): void {
    if (this.monotonic) return;
    this.value -= by;
    this.touched = true;
  }

  clear(): void {
    this.value = 0;
    this.touched = false;
  }
}

abstract class ValueMetric<L extends string> extends SeriesMetric<L, ValueSeries> {
  inc(labels: Readonly<Record<L, string>>, by = 1): void {
    this.series(labels).inc(by);
  }

  protected expose(series: ValueSeries, values: ExposedValue[]): void {
    values.push({ labels: { ...series.labels }, value: series.value });
  }
}

/** A Prometheus counter whose series are resolved once (see SeriesMetric). */
export class SeriesCounter<L extends string> extends ValueMetric<L> {
  readonly type = 'counter';

  protected create(labels: Readonly<Record<string, string>>): ValueSeries {
    return new ValueSeries(labels, true);
  }
}

/** A Prometheus gauge whose series are resolved once (see SeriesMetric). */
export class SeriesGauge<L extends string> extends ValueMetric<L> {
  readonly type = 'gauge';

  dec(labels: Readonly<Record<L, string>>, by = 1): void {
    this.series(labels).dec(by);
  }

  protected create(labels: Readonly<Record<string, string>>): ValueSeries {
    return new ValueSeries(labels, false);
  }
}
