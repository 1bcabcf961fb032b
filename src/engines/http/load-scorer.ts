import type { EngineGauges } from './engine-gauges.js';

/**
 * One replica as the scorer sees it: plain data, so that the scorer is a pure function any
 * transport could feed (the HTTP engine today; an endpoint picker serving another gateway later).
 */
export interface ReplicaFigures {
  /** It may take the request: healthy, not ejected, not excluded by the request (a retry). */
  eligible: boolean;
  /** Its engine's latest reading; absent when it has none that is fresh. */
  gauges?: EngineGauges;
  /** Requests sent to it since that reading's request left. */
  sentSinceScrape: number;
  /** Gantry's own requests in flight on it: the figure of a replica without a reading. */
  outstanding: number;
  /** The request's prefix hashes to it (its cache likely holds the conversation). */
  holdsPrefix: boolean;
}

export interface LoadWeights {
  waitingRequests: number;
  runningRequests: number;
  kvCacheUsage: number;
  sentSinceScrape: number;
  prefixAffinity: number;
}

/** The thresholds of `saturation`: a replica at or past either has no room. */
export interface SaturationThresholds {
  waitingRequests?: number;
  kvCacheUsage?: number;
}

/**
 * A replica's score, lower is better: its engine's waiting and running requests and KV-cache use,
 * plus what Gantry sent since that reading, each weighted, less the prefix bonus. Without a reading,
 * Gantry's own requests in flight count as waiting ones (any of them may be).
 */
export function loadScore(replica: ReplicaFigures, weights: LoadWeights): number {
  const bonus = replica.holdsPrefix ? weights.prefixAffinity : 0;
  const { gauges } = replica;
  // Without a reading, each of Gantry's own requests may be waiting there.
  if (gauges === undefined) return weights.waitingRequests * replica.outstanding - bonus;
  return (
    weights.waitingRequests * (gauges.waitingRequests ?? 0) +
    weights.runningRequests * (gauges.runningRequests ?? replica.outstanding) +
    weights.kvCacheUsage * (gauges.kvCacheUsage ?? 0) +
    weights.sentSinceScrape * replica.sentSinceScrape -
    bonus
  );
}

/**
 * Whether one more request would find room on the replica. One without a fresh reading has room:
 * Gantry holds requests only on evidence. Its waiting figure counts every send since the reading as
 * waiting (it may be): between two readings a replica takes at most the room its reading showed.
 */
export function hasRoom(replica: ReplicaFigures, thresholds: SaturationThresholds): boolean {
  if (!replica.eligible) return false;
  const { gauges } = replica;
  if (gauges === undefined) return true;
  const waiting = (gauges.waitingRequests ?? 0) + replica.sentSinceScrape;
  if (thresholds.waitingRequests !== undefined && waiting >= thresholds.waitingRequests) return false;
  if (thresholds.kvCacheUsage !== undefined && (gauges.kvCacheUsage ?? 0) >= thresholds.kvCacheUsage) return false;
  return true;
}

/**
 * Whether a model's fleet has room for one more request: one eligible replica with room is
 * enough; a fleet with no eligible replica "has room" too (the engine then answers that every
 * replica is down, at once, rather than holding the request for a replica that may not come back).
 */
export function fleetHasRoom(replicas: readonly ReplicaFigures[], thresholds: SaturationThresholds): boolean {
  const eligible = replicas.filter((replica) => replica.eligible);
  return eligible.length === 0 || eligible.some((replica) => hasRoom(replica, thresholds));
}

/**
 * The index of the eligible replica with the lowest score, or undefined when none is eligible.
 * Under saturation, the replicas with room are preferred (a held request released for room must
 * not land in a full replica's queue for its prefix bonus). Ties go to the first from `startAt`,
 * so that a caller rotating it spreads equal replicas.
 */
export function chooseReplica(
  replicas: readonly ReplicaFigures[],
  weights: LoadWeights,
  { startAt = 0, saturation }: { startAt?: number; saturation?: SaturationThresholds } = {},
): number | undefined {
  const roomy = saturation ? replicas.map((replica) => hasRoom(replica, saturation)) : undefined;
  const preferRoom = roomy?.some(Boolean) ?? false;
  let best: number | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (let offset = 0; offset < replicas.length; offset += 1) {
    const index = (startAt + offset) % replicas.length;
    const replica = replicas[index];
    if (!replica.eligible || (preferRoom && !roomy![index])) continue;
    const score = loadScore(replica, weights);
    if (best === undefined || score < bestScore) {
      best = index;
      bestScore = score;
    }
  }
  return best;
}
