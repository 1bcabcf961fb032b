import { maskQuery } from '../../config/masked-url.js';
import type { HealthCheckState } from './health-probe.js';

/** When a replica that keeps failing is taken out of rotation, and for how long. */
export interface EjectionPolicy {
  /** Consecutive failed requests that eject a replica. */
  maxFailures: number;
  /** The first ejection's length; each further ejection without a success in between doubles it. */
  baseMs: number;
  maxMs: number;
}

/** One replica as `/ready` reports it. */
export interface ReplicaState {
  url: string;
  /** Takes requests now: its last health check passed and it is not ejected. */
  healthy: boolean;
  outstanding: number;
  consecutiveFailures: number;
  /**
   * The last active health check: `passing`, `failing`, `unknown` (the replica has no probe route:
   * served, watched by passive checks only), or `off` when checks are disabled.
   */
  healthCheck: HealthCheckState;
  /** Milliseconds until an ejected replica is tried again; absent when not ejected. */
  ejectedForMs?: number;
}

/** What one replica was sent, for the per-replica counters of `/metrics`. */
export interface ReplicaTraffic {
  url: string;
  /** Requests sent to it, retries included. */
  requests: number;
  /** Under prefix affinity: requests it was the choice for but passed on, being over the load bound. */
  affinityOverrides?: number;
}

/** One upstream server of a model's fleet, and what the pool knows about it. */
export class Replica {
  outstanding = 0;
  consecutiveFailures = 0;
  /** Ejections since the last success; sets the length of the next one. */
  ejections = 0;
  ejectedUntil = 0;
  healthCheck: ReplicaState['healthCheck'] = 'off';
  /** Requests sent to it (retries included), for the per-replica request counter. */
  requests = 0;
  /** Requests it was the prefix-affinity choice for but passed on, being over the load bound. */
  affinityOverrides = 0;

  /** The URL as shown in `/ready`, metrics and logs: any user:password in it removed. */
  readonly label: string;

  constructor(readonly url: string) {
    this.label = withoutCredentials(url);
  }

  isAvailable(now: number): boolean {
    return this.healthCheck !== 'failing' && now >= this.ejectedUntil;
  }
}

/**
 * The replicas of one model, balanced by least outstanding requests.
 *
 * Two independent signals must both allow a replica: the active health check (a failing check
 * takes it out until a check passes; an `unknown` one does not) and passive ejection (after `maxFailures` consecutive failed
 * requests it is out for an exponentially growing time). A passing health check does not cut an
 * ejection short, so a replica whose `/health` is fine but whose answers fail stays out. After an
 * ejection expires the replica is on probation: one more failure ejects it again, for twice as
 * long; one success clears its record. Ties between equally loaded replicas rotate, so sequential
 * traffic spreads too. Time is injected for tests.
 */
export class ReplicaPool {
  readonly replicas: readonly Replica[];
  private cursor = 0;

  constructor(
    urls: readonly string[],
    private readonly policy: EjectionPolicy,
    private readonly now: () => number = Date.now,
  ) {
    this.replicas = urls.map((url) => new Replica(url));
  }

  /** The available replica with the fewest outstanding requests, skipping `excluded`. */
  pick(excluded: ReadonlySet<Replica> = new Set()): Replica | undefined {
    const now = this.now();
    let best: Replica | undefined;
    let bestPosition = 0;
    for (let offset = 0; offset < this.replicas.length; offset += 1) {
      const position = (this.cursor + offset) % this.replicas.length;
      const replica = this.replicas[position];
      if (excluded.has(replica) || !replica.isAvailable(now)) continue;
      if (best === undefined || replica.outstanding < best.outstanding) {
        best = replica;
        bestPosition = position;
      }
    }
    if (best) this.cursor = (bestPosition + 1) % this.replicas.length;
    return best;
  }

  recordSuccess(replica: Replica): void {
    replica.consecutiveFailures = 0;
    replica.ejections = 0;
  }

  /** Returns the ejection length when this failure ejected the replica. */
  recordFailure(replica: Replica): number | undefined {
    replica.consecutiveFailures += 1;
    const now = this.now();
    // Requests that were in flight when it was ejected do not lengthen the ejection.
    if (replica.consecutiveFailures < this.policy.maxFailures || now < replica.ejectedUntil) return undefined;
    const ejectionMs = Math.min(this.policy.baseMs * 2 ** replica.ejections, this.policy.maxMs);
    replica.ejections += 1;
    replica.ejectedUntil = now + ejectionMs;
    return ejectionMs;
  }

  recordHealthCheck(replica: Replica, state: Exclude<HealthCheckState, 'off'>): void {
    replica.healthCheck = state;
  }

  /** At least one replica can take a request now. */
  hasAvailable(): boolean {
    const now = this.now();
    return this.replicas.some((replica) => replica.isAvailable(now));
  }

  states(): ReplicaState[] {
    const now = this.now();
    return this.replicas.map((replica) => ({
      url: replica.label,
      healthy: replica.isAvailable(now),
      outstanding: replica.outstanding,
      consecutiveFailures: replica.consecutiveFailures,
      healthCheck: replica.healthCheck,
      ...(replica.ejectedUntil > now ? { ejectedForMs: replica.ejectedUntil - now } : {}),
    }));
  }
}

/** How a replica is named in logs, `/ready` and metrics: its URL without credentials, its query values masked. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    const queryMasked = maskQuery(parsed);
    if (parsed.username === '' && parsed.password === '' && !queryMasked) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}
