import { Counter, Gauge, type Registry } from 'prom-client';
import type { InferenceEngine } from '../../engine/inference-engine.js';
import type { ReplicaLoad, ReplicaReport, ReportedReplica } from '../../engine/replica-report.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { ReplicaCounterTotals, type CounterRow } from './replica-counter-totals.js';

/**
 * What an engine reports of its replicas, or nothing: an engine whose report throws shows no
 * replica series rather than failing the scrape.
 */
export function reportOf(engine: InferenceEngine): ReplicaReport | undefined {
  try {
    return engine.replicaReport?.();
  } catch {
    return undefined;
  }
}

/** A per-replica gauge: its value for one replica, or undefined for none. */
interface ReplicaGauge {
  name: string;
  help: string;
  value: (replica: ReportedReplica) => number | undefined;
  /** How the instance's workers' values combine (each reads the replicas itself). */
  aggregator: 'min' | 'sum' | 'average';
}

const loadFigure = (figure: Exclude<keyof ReplicaLoad, 'readFailures'>) => (replica: ReportedReplica) =>
  replica.load?.[figure];

const GAUGES: ReplicaGauge[] = [
  {
    name: 'gantry_upstream_replica_healthy',
    help: '1 when an upstream replica passes its health checks, else 0.',
    value: (replica) => (replica.healthy ? 1 : 0),
    // Healthy for the instance when every worker says so.
    aggregator: 'min',
  },
  {
    name: 'gantry_upstream_in_flight_requests',
    help: 'Requests sent to an upstream replica and not yet ended.',
    value: (replica) => replica.inFlight,
    aggregator: 'sum',
  },
  {
    name: 'gantry_engine_waiting_requests',
    help: "Requests waiting in an upstream replica's own queue, as its metrics last said (all senders').",
    value: loadFigure('waitingRequests'),
    aggregator: 'average',
  },
  {
    name: 'gantry_engine_running_requests',
    help: "Requests an upstream replica is working on, as its metrics last said (all senders').",
    value: loadFigure('runningRequests'),
    aggregator: 'average',
  },
  {
    name: 'gantry_engine_kv_cache_usage',
    help: "An upstream replica's KV-cache use (0 to 1), as its metrics last said.",
    value: loadFigure('kvCacheUsage'),
    aggregator: 'average',
  },
];

/** The counters read from replica reports, `model` first among their labels, each with its rows of a report. */
const COUNTERS: Array<{
  name: string;
  help: string;
  labelNames: string[];
  rows: (report: ReplicaReport) => Array<Omit<CounterRow, 'counter'>>;
}> = [
  {
    name: 'gantry_upstream_requests_total',
    help: 'Requests sent to each upstream replica (retries included).',
    labelNames: ['replica'],
    rows: (report) => report.replicas.map((replica) => ({ labels: { replica: replica.id }, count: replica.requests })),
  },
  {
    name: 'gantry_stream_resumes_total',
    help: 'Answers an upstream replica failed in the middle of, continued on another replica, by the replica that failed and what cut them (reset, status, error, stall).',
    labelNames: ['replica', 'reason'],
    rows: (report) =>
      (report.resumes ?? []).map(({ replica, reason, count }) => ({ labels: { replica, reason }, count })),
  },
  {
    name: 'gantry_stream_resume_failures_total',
    help: 'Answers cut in the middle that mid-stream failover did not continue, by why (spent, not_continuable, refused, no_replica); each ended in-band.',
    labelNames: ['reason'],
    rows: (report) => (report.resumeFailures ?? []).map(({ reason, count }) => ({ labels: { reason }, count })),
  },
  {
    name: 'gantry_upstream_affinity_overrides_total',
    help: 'Requests a replica was the prefix-affinity choice for but passed on to the next one on the ring, being over the load bound.',
    labelNames: ['replica'],
    rows: (report) =>
      report.replicas.flatMap((replica) =>
        replica.affinityOverrides === undefined
          ? []
          : [{ labels: { replica: replica.id }, count: replica.affinityOverrides }],
      ),
  },
  {
    name: 'gantry_engine_metrics_scrape_failures_total',
    help: "Readings of an upstream replica's metrics that failed (no answer in time, an error status, not an exposition).",
    labelNames: ['replica'],
    rows: (report) =>
      report.replicas.flatMap((replica) =>
        replica.load === undefined ? [] : [{ labels: { replica: replica.id }, count: replica.load.readFailures }],
      ),
  },
];

/** Every counter's rows of one report. */
function countsOf(report: ReplicaReport): CounterRow[] {
  return COUNTERS.flatMap(({ name, rows }) => rows(report).map((row) => ({ ...row, counter: name })));
}

/**
 * The per-replica series of `/metrics`, read from what each model's engine reports through the
 * engine port (`InferenceEngine.replicaReport`) when scraped, whatever its kind: gauges from the
 * serving engines; counters as totals that a reload does not reset (ReplicaCounterTotals). Each
 * is reset before it is filled, so that a model or replica a reload removed leaves it.
 */
export function registerReplicaMetrics(registry: Registry, models: ModelRegistry): void {
  const totals = new ReplicaCounterTotals(countsOf);
  models.onEngineClosed((model, engine) => totals.closed(model, reportOf(engine)));
  const served = () =>
    models.list().flatMap((model) => {
      const report = reportOf(model.engine);
      return report ? [{ model: model.config.name, report }] : [];
    });
  for (const { name, help, value, aggregator } of GAUGES) {
    new Gauge({
      name,
      help,
      labelNames: ['model', 'replica'],
      registers: [registry],
      aggregator,
      collect() {
        this.reset();
        for (const { model, report } of served())
          for (const replica of report.replicas) {
            const figure = value(replica);
            if (figure !== undefined) this.set({ model, replica: replica.id }, figure);
          }
      },
    });
  }
  for (const { name, help, labelNames } of COUNTERS) {
    new Counter({
      name,
      help,
      labelNames: ['model', ...labelNames],
      registers: [registry],
      collect() {
        this.reset();
        const rows = totals.totals(
          models.openEnginesByModel().map(({ model, engine }) => ({ model, report: reportOf(engine) })),
          new Set(models.list().map((model) => model.config.name)),
        );
        for (const row of rows) if (row.counter === name) this.inc({ model: row.model, ...row.labels }, row.count);
      },
    });
  }
}
