import { Inject, Injectable } from '@nestjs/common';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { GenerationHook, type GenerationOutcome } from '../generation-hook.js';
import { httpStatusOf, phaseOf } from '../generation-outcome.js';
import type { GenerationTelemetry } from '../generation-telemetry.js';
import { GantryMetrics } from './gantry-metrics.js';
import type { RouteLabels, RouteSeries } from './route-series.js';
import type { TenantSeries } from './tenant-series.js';

/**
 * Records every generation in GantryMetrics, into its route's series and its tenant's (each
 * resolved once per route or tenant and model, kept per request from its acceptance). A request
 * refused before its handler knew its caller (a body that fails validation) has no tenant series.
 */
@Injectable()
export class MetricsHook extends GenerationHook {
  private readonly routes = new WeakMap<GenerationTelemetry, RouteSeries>();
  private readonly tenants = new WeakMap<GenerationTelemetry, TenantSeries>();

  constructor(@Inject(GantryMetrics) private readonly metrics: GantryMetrics) {
    super();
  }

  protected override onAccepted(telemetry: GenerationTelemetry): void {
    const route = this.metrics.route(labels(telemetry));
    this.routes.set(telemetry, route);
    route.active.inc();
    if (telemetry.tenant !== undefined)
      this.tenants.set(telemetry, this.metrics.tenant(telemetry.tenant, telemetry.model ?? ''));
  }

  protected override onAdmitted(telemetry: GenerationTelemetry): void {
    const queueSeconds = telemetry.queueMs! / 1000;
    this.routeOf(telemetry).queueTime.observe(queueSeconds);
    this.tenants.get(telemetry)?.queueTime.observe(queueSeconds);
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
    const tenant =
      this.tenants.get(telemetry) ??
      (telemetry.tenant === undefined ? undefined : this.metrics.tenant(telemetry.tenant, telemetry.model ?? ''));
    tenant?.requests(outcome.kind).inc();
    if (!telemetry.accepted) return;
    tenant?.promptTokens.inc(telemetry.usage.promptTokens);
    tenant?.completionTokens.inc(telemetry.usage.completionTokens);
    route.active.dec();
    route.requestDuration.observe((performance.now() - telemetry.arrivedAt) / 1000);
    route.promptTokens.inc(telemetry.usage.promptTokens);
    route.completionTokens.inc(telemetry.usage.completionTokens);
    const labelled = labels(telemetry);
    if (outcome.kind === 'failed')
      this.metrics.engineErrors.inc({ ...labelled, kind: asGatewayError(outcome.error).kind });
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
