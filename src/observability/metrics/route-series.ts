import type { GantryMetrics } from './gantry-metrics.js';
import type { ValueSeries } from './series-counter-gauge.js';
import type { HistogramSeries } from './series-histogram.js';

export interface RouteLabels {
  model: string;
  api: string;
  engine: string;
}

/**
 * The series of one route (model, API, engine) that each of its requests records into: resolved
 * once per route, so that a request's metrics are a few additions rather than a label hash each.
 */
export class RouteSeries {
  readonly active: ValueSeries;
  readonly queueTime: HistogramSeries;
  readonly timeToFirstToken: HistogramSeries;
  readonly interTokenLatency: HistogramSeries;
  readonly requestDuration: HistogramSeries;
  readonly promptTokens: ValueSeries;
  readonly completionTokens: ValueSeries;
  readonly heartbeats: ValueSeries;
  private readonly outcomes = new Map<string, ValueSeries>();

  constructor(
    private readonly metrics: GantryMetrics,
    private readonly labels: RouteLabels,
  ) {
    this.active = metrics.activeRequests.series(labels);
    this.queueTime = metrics.queueTime.series(labels);
    this.timeToFirstToken = metrics.timeToFirstToken.series(labels);
    this.interTokenLatency = metrics.interTokenLatency.series(labels);
    this.requestDuration = metrics.requestDuration.series(labels);
    this.promptTokens = metrics.promptTokens.series(labels);
    this.completionTokens = metrics.completionTokens.series(labels);
    this.heartbeats = metrics.heartbeats.series({ model: labels.model, api: labels.api });
  }

  /** The `gantry_requests_total` series of this route for an outcome and status. */
  requests(outcome: string, status: number): ValueSeries {
    const key = `${outcome} ${status}`;
    let series = this.outcomes.get(key);
    if (!series) {
      series = this.metrics.requests.series({ ...this.labels, outcome, status: String(status) });
      this.outcomes.set(key, series);
    }
    return series;
  }
}
