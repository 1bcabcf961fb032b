import type { EngineGauges } from './engine-gauges.js';
import type { Replica } from './replica-pool.js';

/** What Gantry knows of one replica's load beyond its own requests: its latest metrics reading. */
export class ReplicaLoad {
  /** The latest reading that parsed; dropped once stale (see `freshGauges`). */
  gauges?: EngineGauges;
  readAt = Number.NEGATIVE_INFINITY;
  /** Requests sent to it (retries and continuations included) since the request of its latest reading left. */
  sentSinceScrape = 0;
  /** Requests sent to it in all, the mark a reading starts from. */
  sent = 0;
  /** Readings that failed: no answer in time, an error status, a body that is not an exposition. */
  scrapeFailures = 0;
}

/** One replica's load as routing and saturation see it now. */
export interface ReplicaLoadView {
  /** Its reading, when one came within the last `staleAfterMs`; absent: judge by Gantry's own counts. */
  gauges?: EngineGauges;
  sentSinceScrape: number;
}

/**
 * The load figures of a model's replicas: the scraper writes each reading, the engine counts each
 * send, routing and the saturation gate read them. A reading's arrival is announced to
 * `onReading` listeners (the gate releases held requests then). A reading older than
 * `staleAfterMs` is ignored: a replica whose `/metrics` went silent or wrong is judged by Gantry's
 * own counts, as one that never had metrics.
 */
export class FleetLoad {
  private readonly loads = new Map<Replica, ReplicaLoad>();
  private readonly listeners = new Set<() => void>();

  constructor(
    replicas: readonly Replica[],
    readonly staleAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {
    for (const replica of replicas) this.loads.set(replica, new ReplicaLoad());
  }

  of(replica: Replica): ReplicaLoad {
    return this.loads.get(replica)!;
  }

  /** A request is on its way to `replica`. */
  countSend(replica: Replica): void {
    const load = this.of(replica);
    load.sent += 1;
    load.sentSinceScrape += 1;
  }

  /** A reading of `replica` whose request left when its send count was `sentMark`. */
  record(replica: Replica, gauges: EngineGauges, sentMark: number): void {
    const load = this.of(replica);
    load.gauges = gauges;
    load.readAt = this.now();
    // Sends after the reading's request left may not show in it yet.
    load.sentSinceScrape = load.sent - sentMark;
    for (const listener of [...this.listeners]) listener();
  }

  recordFailure(replica: Replica): void {
    this.of(replica).scrapeFailures += 1;
  }

  view(replica: Replica): ReplicaLoadView {
    const load = this.of(replica);
    const fresh = load.gauges !== undefined && this.now() - load.readAt <= this.staleAfterMs;
    return fresh
      ? { gauges: load.gauges, sentSinceScrape: load.sentSinceScrape }
      : { sentSinceScrape: load.sentSinceScrape };
  }

  onReading(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
