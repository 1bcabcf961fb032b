import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { ModelRegistry } from '../../models/model-registry.js';
import { registerReplicaMetrics } from './replica-metrics.js';
import { RouteSeries, type RouteLabels } from './route-series.js';
import { SeriesCounter, SeriesGauge } from './series-counter-gauge.js';
import { SeriesHistogram } from './series-histogram.js';
import { TenantSeries } from './tenant-series.js';

const ROUTE_LABELS = ['model', 'api', 'engine'] as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const GAP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56];

/**
 * Gantry's Prometheus metrics, in one registry of their own (not prom-client's global one, so
 * several gateways can live in one process). Every name is in the `gantry_` namespace; the
 * docs/observability.md documents each. What every request records is a Series* metric, resolved once per route
 * (`route()`); the rare ones are prom-client's own.
 */
@Injectable()
export class GantryMetrics {
  readonly registry = new Registry();
  private readonly routes = new Map<string, RouteSeries>();
  private readonly tenants = new Map<string, TenantSeries>();

  readonly requests = new SeriesCounter({
    name: 'gantry_requests_total',
    help: 'Generation requests by outcome (completed, failed, client_closed, rejected) and HTTP status.',
    labelNames: [...ROUTE_LABELS, 'outcome', 'status'],
    registers: [this.registry],
  });
  readonly timeToFirstToken = this.routeHistogram(
    'gantry_time_to_first_token_seconds',
    'From arrival (queue included) to the first output: content, reasoning or a tool call.',
  );
  readonly interTokenLatency = this.routeHistogram(
    'gantry_inter_token_latency_seconds',
    'Gap between consecutive outputs of one stream.',
    GAP_BUCKETS,
  );
  readonly requestDuration = this.routeHistogram(
    'gantry_request_duration_seconds',
    'From arrival to the end of the response (end to end).',
  );
  readonly queueTime = this.routeHistogram(
    'gantry_queue_time_seconds',
    'From arrival to admission (waiting for a concurrency slot).',
  );
  readonly promptTokens = this.routeCounter('gantry_prompt_tokens_total', 'Prompt tokens processed.');
  readonly completionTokens = this.routeCounter(
    'gantry_completion_tokens_total',
    'Completion tokens generated (reasoning included).',
  );
  readonly heartbeats = new SeriesCounter({
    name: 'gantry_heartbeats_total',
    help: 'Keep-alives sent (protocol heartbeats or SSE comments), by API.',
    labelNames: ['model', 'api'],
    registers: [this.registry],
  });
  readonly activeRequests = new SeriesGauge({
    name: 'gantry_active_requests',
    help: 'Generation requests accepted and not yet finished (streams and non-streaming), queued ones included.',
    labelNames: ROUTE_LABELS,
    registers: [this.registry],
  });
  readonly clientHangups = new Counter({
    name: 'gantry_client_hangups_total',
    help: 'Clients that closed the connection before the end, by phase (queued, prefill, decoding).',
    labelNames: [...ROUTE_LABELS, 'phase'],
    registers: [this.registry],
  });
  readonly tenantRequests = new SeriesCounter({
    name: 'gantry_tenant_requests_total',
    help: 'Generation requests by tenant (a named key, or default), model and outcome.',
    labelNames: ['tenant', 'model', 'outcome'],
    registers: [this.registry],
  });
  readonly tenantTokens = new SeriesCounter({
    name: 'gantry_tenant_tokens_total',
    help: 'Tokens by tenant, model and kind (prompt, completion), as the engine reported them.',
    labelNames: ['tenant', 'model', 'kind'],
    registers: [this.registry],
  });
  readonly tenantQueueTime = new SeriesHistogram({
    name: 'gantry_tenant_queue_time_seconds',
    help: 'From arrival to admission, by tenant and model.',
    labelNames: ['tenant', 'model'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly tenantRefusals = new Counter({
    name: 'gantry_tenant_limited_total',
    help: "Requests refused by their tenant's (or key's) limits, by limit: requests_per_minute, tokens_per_minute, tokens_per_day, concurrent_streams.",
    labelNames: ['tenant', 'limit'],
    registers: [this.registry],
  });
  readonly limitStoreErrors = new Counter({
    name: 'gantry_limit_store_errors_total',
    help: 'Failed calls to the per-key limit store (Redis), by operation; requests are let through meanwhile.',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  readonly responseStoreErrors = new Counter({
    name: 'gantry_response_store_errors_total',
    help: 'Failed calls to the Responses store, by operation; reads fail the request (503), writes are let go.',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  readonly hookErrors = new Counter({
    name: 'gantry_hook_errors_total',
    help: 'Exceptions a GenerationHook threw, by hook (its class) and method; each was caught and the request went on.',
    labelNames: ['hook', 'method'],
    registers: [this.registry],
  });
  readonly unhandledStreamErrors = new Counter({
    name: 'gantry_unhandled_stream_errors_total',
    help: "Errors RxJS could deliver to no one (a subscriber's callback that threw): logged and counted instead of ending the process.",
    registers: [this.registry],
  });
  readonly engineErrors = new Counter({
    name: 'gantry_engine_errors_total',
    help: 'Engine failures after admission, by kind.',
    labelNames: [...ROUTE_LABELS, 'kind'],
    registers: [this.registry],
  });

  constructor(@Inject(ModelRegistry) models: ModelRegistry) {
    collectDefaultMetrics({ register: this.registry, prefix: 'gantry_' });
    new Gauge({
      name: 'gantry_queued_requests',
      help: 'Requests waiting for an admission slot.',
      labelNames: ['model'],
      registers: [this.registry],
      collect() {
        // Reset first: a model a reload removed leaves the gauge.
        this.reset();
        for (const model of models.list()) this.set({ model: model.config.name }, model.admission.queued);
      },
    });
    new Gauge({
      name: 'gantry_running_requests',
      help: 'Requests holding an admission slot (running on the engine).',
      labelNames: ['model'],
      registers: [this.registry],
      collect() {
        // Reset first: a model a reload removed leaves the gauge.
        this.reset();
        for (const model of models.list()) this.set({ model: model.config.name }, model.admission.running);
      },
    });
    registerReplicaMetrics(this.registry, models);
  }

  /** A histogram by route (model, API, engine), in this registry. */
  private routeHistogram(
    name: string,
    help: string,
    buckets: readonly number[] = LATENCY_BUCKETS,
  ): SeriesHistogram<(typeof ROUTE_LABELS)[number]> {
    return new SeriesHistogram({ name, help, labelNames: ROUTE_LABELS, buckets, registers: [this.registry] });
  }

  /** A counter by route (model, API, engine), in this registry. */
  private routeCounter(name: string, help: string): SeriesCounter<(typeof ROUTE_LABELS)[number]> {
    return new SeriesCounter({ name, help, labelNames: ROUTE_LABELS, registers: [this.registry] });
  }

  /** The series one tenant's requests on one model record into, resolved on the pair's first request. */
  tenant(tenant: string, model: string): TenantSeries {
    const key = `${tenant}\u0000${model}`;
    let series = this.tenants.get(key);
    if (!series) {
      series = new TenantSeries(this, { tenant, model });
      this.tenants.set(key, series);
    }
    return series;
  }

  /** The series one route's requests record into, resolved on its first request. */
  route(labels: RouteLabels): RouteSeries {
    const key = `${labels.model}\u0000${labels.api}\u0000${labels.engine}`;
    let route = this.routes.get(key);
    if (!route) {
      route = new RouteSeries(this, labels);
      this.routes.set(key, route);
    }
    return route;
  }
}
