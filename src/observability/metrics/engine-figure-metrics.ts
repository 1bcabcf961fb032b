import { Counter, Gauge, type Registry } from 'prom-client';
import { HttpEngine } from '../../engines/http/http-engine.js';
import type { ReplicaEngineFigures } from '../../engines/http/fleet-load-wiring.js';
import type { ModelRegistry } from '../../models/model-registry.js';

const FIGURES: Array<{ name: string; help: string; figure: 'waitingRequests' | 'runningRequests' | 'kvCacheUsage' }> = [
  {
    name: 'gantry_engine_waiting_requests',
    help: "Requests waiting in an upstream replica's own queue, as its metrics last said (all senders').",
    figure: 'waitingRequests',
  },
  {
    name: 'gantry_engine_running_requests',
    help: "Requests an upstream replica is working on, as its metrics last said (all senders').",
    figure: 'runningRequests',
  },
  {
    name: 'gantry_engine_kv_cache_usage',
    help: "An upstream replica's KV-cache use (0 to 1), as its metrics last said.",
    figure: 'kvCacheUsage',
  },
];

/**
 * The engine figures each HTTP replica's `/metrics` reported, read from the engines when Gantry's
 * own metrics are scraped (docs/observability.md). A replica without a fresh reading has no series.
 * With workers each reads the replicas itself: the instance shows their average.
 */
export function registerEngineFigureMetrics(registry: Registry, models: ModelRegistry): void {
  const figuresByModel = () =>
    models
      .list()
      .flatMap((model) =>
        model.engine instanceof HttpEngine
          ? [{ model: model.config.name, replicas: model.engine.engineFigures() as ReplicaEngineFigures[] }]
          : [],
      );
  for (const { name, help, figure } of FIGURES) {
    new Gauge({
      name,
      help,
      labelNames: ['model', 'replica'],
      registers: [registry],
      aggregator: 'average',
      collect() {
        this.reset();
        for (const { model, replicas } of figuresByModel())
          for (const replica of replicas) {
            const value = replica[figure];
            if (value !== undefined) this.set({ model, replica: replica.url }, value);
          }
      },
    });
  }
  new Counter({
    name: 'gantry_engine_metrics_scrape_failures_total',
    help: "Readings of an upstream replica's metrics that failed (no answer in time, an error status, not an exposition).",
    labelNames: ['model', 'replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { model, replicas } of figuresByModel())
        for (const replica of replicas) this.inc({ model, replica: replica.url }, replica.scrapeFailures);
    },
  });
}
