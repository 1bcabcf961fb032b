import type { GantryMetrics } from './gantry-metrics.js';
import type { ValueSeries } from './series-counter-gauge.js';
import type { HistogramSeries } from './series-histogram.js';

/**
 * The series of one tenant on one model that each of its requests records into: resolved once
 * per pair, so that a request's tenant metrics are a few additions rather than a label hash each.
 */
export class TenantSeries {
  readonly promptTokens: ValueSeries;
  readonly completionTokens: ValueSeries;
  readonly queueTime: HistogramSeries;
  private readonly outcomes = new Map<string, ValueSeries>();

  constructor(
    private readonly metrics: GantryMetrics,
    private readonly labels: { tenant: string; model: string },
  ) {
    this.promptTokens = metrics.tenantTokens.series({ ...labels, kind: 'prompt' });
    this.completionTokens = metrics.tenantTokens.series({ ...labels, kind: 'completion' });
    this.queueTime = metrics.tenantQueueTime.series(labels);
  }

  /** The `gantry_tenant_requests_total` series of this pair for an outcome. */
  requests(outcome: string): ValueSeries {
    let series = this.outcomes.get(outcome);
    if (!series) {
      series = this.metrics.tenantRequests.series({ ...this.labels, outcome });
      this.outcomes.set(outcome, series);
    }
    return series;
  }
}
