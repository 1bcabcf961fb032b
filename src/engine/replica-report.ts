/**
 * What an engine that spreads a model over several servers (replicas) shows of them on
 * `/metrics` (`InferenceEngine.replicaReport`). Gantry's metrics read it when scraped and name no
 * engine class, so any engine kind, a plugin's included, gets the same series
 * (docs/observability.md). Counts are totals since the engine was built: the metrics carry a
 * replaced engine's totals over to the engine a reload builds for the same model and replica, so
 * a reload resets no counter.
 */
export interface ReplicaReport {
  readonly replicas: readonly ReportedReplica[];
  /** Answers a replica failed in the middle of that another continued, by the replica that failed (its `id`) and what cut them. */
  readonly resumes?: ReadonlyArray<{ readonly replica: string; readonly reason: string; readonly count: number }>;
  /** Answers cut in the middle that were not continued elsewhere, by why. */
  readonly resumeFailures?: ReadonlyArray<{ readonly reason: string; readonly count: number }>;
}

/** One replica as `/metrics` shows it. */
export interface ReportedReplica {
  /**
   * Its `replica` label: stable across reloads (its counters go on by it) and free of secrets (a
   * URL without its user, password or secret query values, or a name).
   */
  readonly id: string;
  /** Takes requests now. */
  readonly healthy: boolean;
  /** Requests sent to it and not yet ended. */
  readonly inFlight: number;
  /** Requests sent to it, retries included. */
  readonly requests: number;
  /** Under a routing that picks a preferred replica: requests it was the choice for but passed on, being too busy. */
  readonly affinityOverrides?: number;
  /** The replica's own load, when the engine reads it; absent when it does not. */
  readonly load?: ReplicaLoad;
}

/** A replica's own figures, as its metrics last said; a figure without a fresh reading is absent. */
export interface ReplicaLoad {
  readonly waitingRequests?: number;
  readonly runningRequests?: number;
  /** 0 to 1. */
  readonly kvCacheUsage?: number;
  /** Readings of its figures that failed. */
  readonly readFailures: number;
}
