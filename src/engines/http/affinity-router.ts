import { HashRing } from './hash-ring.js';
import type { Replica } from './replica-pool.js';

/**
 * Prefix-affinity routing: consistent hashing with bounded loads over a model's replicas.
 *
 * A request's key (the start of its prompt, see prefix-affinity-key.ts) sits at a point of a hash
 * ring on which every replica has many points derived from its URL; the replica owning that point
 * takes it, so each turn of a conversation goes where the previous turns left their prefix cache,
 * and every gateway (and worker) with the same fleet makes the same choice without sharing state.
 * Walking the ring clockwise from the key, a replica is passed over when it is unavailable
 * (failing its health check, ejected), already tried by this request (a retry goes to the next
 * one on the ring), or over the load bound: at least `loadFactor` times the mean outstanding
 * requests of the available replicas, this one included (Mirrokni, Thorup and Zadimoghaddam,
 * "Consistent Hashing with Bounded Loads", 2017). A popular prefix then overflows onto the next
 * replicas of its own ring order instead of piling onto one. The bound reads this process's own
 * counts of outstanding requests: it is the one input that differs between gateways.
 */
export class AffinityRouter {
  private readonly ring: HashRing<Replica>;

  constructor(
    private readonly replicas: readonly Replica[],
    private readonly loadFactor: number,
    private readonly now: () => number = Date.now,
  ) {
    this.ring = new HashRing(replicas.map((replica) => ({ id: ringIdOf(replica.url), member: replica })));
  }

  /**
   * The replica for a request at ring `position`, skipping `excluded`; undefined when none is
   * available. When every candidate is over the bound (possible only once replicas were excluded)
   * the first candidate on the ring takes it. A replica passed over for its load alone counts it in
   * `affinityOverrides`.
   */
  pick(position: number, excluded: ReadonlySet<Replica> = new Set()): Replica | undefined {
    const now = this.now();
    let available = 0;
    let outstanding = 0;
    for (const replica of this.replicas) {
      if (!replica.isAvailable(now)) continue;
      available += 1;
      outstanding += replica.outstanding;
    }
    if (available === 0) return undefined;
    // The mean counts the request being placed, so that an idle fleet accepts it at its first choice.
    const capacity = Math.ceil((this.loadFactor * (outstanding + 1)) / available);
    let preferred: Replica | undefined;
    const accepted = this.ring.walk(position, (replica) => {
      if (excluded.has(replica) || !replica.isAvailable(now)) return false;
      preferred ??= replica;
      return replica.outstanding < capacity;
    });
    const chosen = accepted ?? preferred;
    if (preferred && chosen !== preferred) preferred.affinityOverrides += 1;
    return chosen;
  }
}

/**
 * A replica's identity on the ring: its URL normalised (credentials removed, one form of the same
 * address), so that gateways configured with `http://a:8000/v1/` and `http://user:pw@a:8000/v1` agree.
 */
export function ringIdOf(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/+$/, '');
  } catch {
    return url;
  }
}
