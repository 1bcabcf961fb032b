import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { HttpEngine } from '../../engines/http/http-engine.js';
import { ModelRegistry } from '../../models/model-registry.js';
import { registerEngineFigureMetrics } from './engine-figure-metrics.js';
import { RouteSeries, type RouteLabels } from './route-series.js';
import { SeriesCounter, SeriesGauge } from './series-counter-gauge.js';
import { SeriesHistogram } from './series-histogram.js';
import { TenantSeries } from './tenant-series.js';

const ROUTE_LABELS = ['model', 'api', 'engine'] as const;

/** The models served by upstream fleets, by name: the per-replica series read their engines. */
function* httpEngines(models: ModelRegistry): Generator<[string, HttpEngine]> {
  for (const model of models.list()) if (model.engine instanceof HttpEngine) yield [model.config.name, model.engine];
}

/** One labelled count an HTTP engine reports (its model's label is added). */
interface EngineRow {
  labels: Record<string, string>;
  count: number;
}

/**
 * A counter read from every HTTP engine at scrape time, `model` first among its labels; reset
 * first, so that a model a reload removed leaves it.
 */
function engineCounter(
  registry: Registry,
  models: ModelRegistry,
  definition: { name: string; help: string; labelNames: string[] },
  rows: (engine: HttpEngine) => EngineRow[],
): void {
  new Counter({
    ...definition,
    labelNames: ['model', ...definition.labelNames],
    registers: [registry],
    collect() {
      this.reset();
      for (const [model, engine] of httpEngines(models))
        for (const { labels, count } of rows(engine)) this.inc({ model, ...labels }, count);
    },
  });
}
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
    new Gauge({
      name: 'gantry_upstream_replica_healthy',
      help: '1 when an upstream replica passes its health checks, else 0.',
      labelNames: ['model', 'replica'],
      registers: [this.registry],
      // With workers, each checks the replica: healthy for the instance when every worker says so.
      aggregator: 'min',
      collect() {
        this.reset();
        for (const [model, engine] of httpEngines(models)) {
          for (const replica of engine.replicaStates())
            this.set({ model, replica: replica.url }, replica.healthy ? 1 : 0);
        }
      },
    });
    registerEngineFigureMetrics(this.registry, models);
    const fromEngines = (name: string, help: string, labelNames: string[], rows: (engine: HttpEngine) => EngineRow[]) =>
      engineCounter(this.registry, models, { name, help, labelNames }, rows);
    fromEngines(
      'gantry_upstream_requests_total',
      'Requests sent to each upstream replica (retries included).',
      ['replica'],
      (engine) =>
        engine.replicaTraffic().map((replica) => ({ labels: { replica: replica.url }, count: replica.requests })),
    );
    fromEngines(
      'gantry_stream_resumes_total',
      'Answers an upstream replica failed in the middle of, continued on another replica, by the replica that failed and what cut them (reset, status, error, stall).',
      ['replica', 'reason'],
      (engine) => engine.streamResumes().map(({ replica, reason, count }) => ({ labels: { replica, reason }, count })),
    );
    fromEngines(
      'gantry_stream_resume_failures_total',
      'Answers cut in the middle that mid-stream failover did not continue, by why (spent, not_continuable, refused, no_replica); each ended in-band.',
      ['reason'],
      (engine) => engine.resumeFailures().map(({ reason, count }) => ({ labels: { reason }, count })),
    );
    fromEngines(
      'gantry_upstream_affinity_overrides_total',
      'Requests a replica was the prefix-affinity choice for but passed on to the next one on the ring, being over the load bound.',
      ['replica'],
      (engine) =>
        engine
          .replicaTraffic()
          .flatMap((replica) =>
            replica.affinityOverrides === undefined
              ? []
              : [{ labels: { replica: replica.url }, count: replica.affinityOverrides }],
          ),
    );
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
