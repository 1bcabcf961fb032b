import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { GenerationInterceptor, type GenerationOutcome } from '../generation-interceptor.js';
import { httpStatusOf, phaseOf } from '../generation-outcome.js';
import type { GenerationTelemetry } from '../generation-telemetry.js';
import { GantryMetrics } from './gantry-metrics.js';
import type { HistogramSeries } from './series-histogram.js';

/** Records every generation in GantryMetrics. */
@Injectable()
export class MetricsInterceptor extends GenerationInterceptor {
  /** Each stream's inter-token latency series, resolved at its first output. */
  private readonly gaps = new WeakMap<GenerationTelemetry, HistogramSeries>();

  constructor(@Inject(Reflector) reflector: Reflector, @Inject(GantryMetrics) private readonly metrics: GantryMetrics) {
    super(reflector);
  }

  protected override onAccepted(telemetry: GenerationTelemetry): void {
    this.metrics.activeRequests.inc(labels(telemetry));
  }

  protected override onAdmitted(telemetry: GenerationTelemetry): void {
    this.metrics.queueTime.observe(labels(telemetry), telemetry.queueMs! / 1000);
  }

  protected override onHeartbeat(telemetry: GenerationTelemetry): void {
    this.metrics.heartbeats.inc({ model: telemetry.model ?? '', api: telemetry.api ?? '' });
  }

  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    if (!isOutput(event)) return;
    if (telemetry.outputEvents === 1) {
      this.metrics.timeToFirstToken.observe(labels(telemetry), telemetry.timeToFirstOutputMs! / 1000);
      // Streamed requests only: a client reading the answer whole sees no gaps, and an upstream's
      // whole JSON answer arrives as events of one instant.
      if (telemetry.stream) this.gaps.set(telemetry, this.metrics.interTokenLatency.series(labels(telemetry)));
    } else if (telemetry.lastOutputGapMs !== undefined) {
      this.gaps.get(telemetry)?.observe(telemetry.lastOutputGapMs / 1000);
    }
  }

  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    const route = labels(telemetry);
    this.metrics.requests.inc({ ...route, outcome: outcome.kind, status: String(httpStatusOf(telemetry, outcome)) });
    if (!telemetry.accepted) return;
    this.metrics.activeRequests.dec(route);
    this.metrics.requestDuration.observe(route, (performance.now() - telemetry.arrivedAt) / 1000);
    this.metrics.promptTokens.inc(route, telemetry.usage.promptTokens);
    this.metrics.completionTokens.inc(route, telemetry.usage.completionTokens);
    if (outcome.kind === 'failed') this.metrics.engineErrors.inc({ ...route, kind: asGatewayError(outcome.error).kind });
    if (outcome.kind === 'client_closed') this.metrics.clientHangups.inc({ ...route, phase: phaseOf(telemetry) });
  }
}

function labels(telemetry: GenerationTelemetry) {
  return { model: telemetry.model ?? '', api: telemetry.api ?? '', engine: telemetry.engine ?? '' };
}
