import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import type { WorkerLink } from './worker-link.js';

/** How long a worker asked for its series may take before /metrics answers without them. */
const COLLECT_TIMEOUT_MS = 2_000;

/**
 * The primary's own series (its process, its workers, their restarts), and `GET /metrics` for
 * the instance: every serving worker's series and the primary's, summed.
 */
export class PrimaryMetrics {
  private readonly registry = new Registry();
  private readonly restarts: Counter;

  constructor(private readonly links: ReadonlyMap<number, WorkerLink>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'gantry_' });
    new Gauge({
      name: 'gantry_workers',
      help: 'Worker processes serving the port.',
      registers: [this.registry],
      collect() {
        this.set([...links.values()].filter((link) => link.ready).length);
      },
    });
    this.restarts = new Counter({
      name: 'gantry_worker_restarts_total',
      help: 'Workers started again after one died.',
      registers: [this.registry],
    });
  }

  countRestart(): void {
    this.restarts.inc();
  }

  /** Every serving worker's series and the primary's own, summed as Prometheus text. */
  async text(): Promise<string> {
    const serving = [...this.links.values()].filter((link) => link.ready);
    const parts = await Promise.all(
      serving.map((link) =>
        withTimeout(link.channel.call<MetricObjectWithValues<MetricValue<string>>[]>('collect'), COLLECT_TIMEOUT_MS),
      ),
    );
    const collected = parts.filter((part) => part !== undefined);
    collected.push(await this.registry.getMetricsAsJSON());
    return AggregatorRegistry.aggregate(collected).metrics();
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}
