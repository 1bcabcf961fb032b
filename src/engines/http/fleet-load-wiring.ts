import { EngineMetricsConfig } from './engine-metrics-config.js';
import type { HttpModelConfig } from './http-model-config.js';
import { LoadAwareRouter } from './load-aware-router.js';
import { MetricsScraper } from './metrics-scraper.js';
import { FleetLoad } from './replica-load.js';
import type { Replica } from './replica-pool.js';

/** One replica's engine figures as `/metrics` shows them (Gantry's own metrics, per replica). */
export interface ReplicaEngineFigures {
  url: string;
  waitingRequests?: number;
  runningRequests?: number;
  kvCacheUsage?: number;
  /** Readings of its `/metrics` that failed since the engine started. */
  scrapeFailures: number;
}

/** What an HTTP model reads of its engines' state: the figures, their reader, routing and the gate on them. */
export interface FleetLoadParts {
  load: FleetLoad;
  scraper: MetricsScraper;
  router: LoadAwareRouter;
}

/**
 * The engine-state parts of an HTTP model: present when its metrics are configured, it routes
 * `load-aware` or it has a `saturation`; undefined otherwise (nothing is read).
 */
export function fleetLoadFor(
  config: HttpModelConfig,
  replicas: readonly Replica[],
  headers: Record<string, string>,
): FleetLoadParts | undefined {
  if (config.engineMetrics === undefined && config.routing !== 'load-aware' && config.saturation === undefined)
    return undefined;
  const metrics = config.engineMetrics ?? new EngineMetricsConfig();
  const timeoutMs = Math.max(1_000, 2 * metrics.intervalMs);
  // A reading outlives a few intervals and one reading's timeout; then the replica is judged by Gantry's own counts.
  const load = new FleetLoad(replicas, 3 * metrics.intervalMs + timeoutMs);
  const scraper = new MetricsScraper(replicas, load, {
    path: metrics.path,
    intervalMs: metrics.intervalMs,
    timeoutMs,
    headers,
  });
  const router = new LoadAwareRouter(
    replicas,
    load,
    { ...config.loadAwareWeights },
    config.saturation && {
      waitingRequests: config.saturation.waitingRequests,
      kvCacheUsage: config.saturation.kvCacheUsage,
    },
  );
  return { load, scraper, router };
}

/** Each replica's latest figures (absent when its reading is stale or never came) and failed readings. */
export function engineFiguresOf(parts: FleetLoadParts, replicas: readonly Replica[]): ReplicaEngineFigures[] {
  return replicas.map((replica) => ({
    url: replica.label,
    ...parts.load.view(replica).gauges,
    scrapeFailures: parts.load.of(replica).scrapeFailures,
  }));
}
