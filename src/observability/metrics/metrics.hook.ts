import { Inject, Injectable } from '@nestjs/common';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { GenerationHook, type GenerationOutcome } from '../generation-hook.js';
import { httpStatusOf, phaseOf } from '../generation-outcome.js';
import type { GenerationTelemetry } from '../generation-telemetry.js';
import { GantryMetrics } from './gantry-metrics.js';
import type { RouteLabels, RouteSeries } from './route-series.js';

/**
 * Records every generation in GantryMetrics, into its route's series (resolved once per route,
 * kept per request from its acceptance).
 */
@Injectable()
export class MetricsHook extends GenerationHook {
  private readonly routes = new WeakMap<GenerationTelemetry, RouteSeries>();

  constructor(@Inject(GantryMetrics) private readonly metrics: GantryMetrics) {
    super();
  }

  protected override onAccepted(telemetry: GenerationTelemetry): void {
    const route = this.metrics.route(labels(telemetry));
    this.routes.set(telemetry, route);
    route.active.inc();
  }

  protected override onAdmitted(telemetry: GenerationTelemetry): void {
    this.routeOf(telemetry).queueTime.observe(telemetry.queueMs! / 1000);
  }

  protected override onHeartbeat(telemetry: GenerationTelemetry): void {
    this.routeOf(telemetry).heartbeats.inc();
  }

  protected override onEvent(telemetry: GenerationTelemetry, event: EngineEvent): void {
    if (!isOutput(event)) return;
    if (telemetry.outputEvents === 1) {
      this.routeOf(telemetry).timeToFirstToken.observe(telemetry.timeToFirstOutputMs! / 1000);
    } else if (telemetry.stream && telemetry.lastOutputGapMs !== undefined) {
      // Streamed requests only: a client reading the answer whole sees no gaps, and an upstream's
      // whole JSON answer arrives as events of one instant.
      this.routeOf(telemetry).interTokenLatency.observe(telemetry.lastOutputGapMs / 1000);
    }
  }

  protected override onEnd(telemetry: GenerationTelemetry, outcome: GenerationOutcome): void {
    const route = this.routeOf(telemetry);
    route.requests(outcome.kind, httpStatusOf(telemetry, outcome)).inc();
    if (!telemetry.accepted) return;
    route.active.dec();
    route.requestDuration.observe((performance.now() - telemetry.arrivedAt) / 1000);
    route.promptTokens.inc(telemetry.usage.promptTokens);
    route.completionTokens.inc(telemetry.usage.completionTokens);
    const labelled = labels(telemetry);
    if (outcome.kind === 'failed') this.metrics.engineErrors.inc({ ...labelled, kind: asGatewayError(outcome.error).kind });
    if (outcome.kind === 'client_closed') this.metrics.clientHangups.inc({ ...labelled, phase: phaseOf(telemetry) });
  }

  /** The request's route, as resolved at acceptance (a refused request resolves it here). */
  private routeOf(telemetry: GenerationTelemetry): RouteSeries {
    return this.routes.get(telemetry) ?? this.metrics.route(labels(telemetry));
  }
}

function labels(telemetry: GenerationTelemetry): RouteLabels {
  return { model: telemetry.model ?? '', api: telemetry.api, engine: telemetry.engine ?? '' };
}
