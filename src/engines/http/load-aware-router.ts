import type { DispatchGate } from '../../engine/dispatch-gate.js';
import { ringIdOf } from './affinity-router.js';
import { HashRing } from './hash-ring.js';
import {
  chooseReplica,
  fleetHasRoom,
  type LoadWeights,
  type ReplicaFigures,
  type SaturationThresholds,
} from './load-scorer.js';
import type { FleetLoad } from './replica-load.js';
import type { Replica } from './replica-pool.js';

/**
 * `routing: load-aware` and the saturation gate of one model: the replicas' figures gathered
 * (health from the pool, readings and sends from the fleet's load, the prefix owner from the
 * same hash ring prefix affinity uses) and handed to the pure scorer (load-scorer.ts).
 */
export class LoadAwareRouter implements DispatchGate {
  private readonly ring: HashRing<Replica>;
  private cursor = 0;

  constructor(
    private readonly replicas: readonly Replica[],
    private readonly load: FleetLoad,
    private readonly weights: LoadWeights,
    private readonly saturation?: SaturationThresholds,
    private readonly now: () => number = Date.now,
  ) {
    this.ring = new HashRing(replicas.map((replica) => ({ id: ringIdOf(replica.url), member: replica })));
  }

  /** Each replica's figures for a request at ring `position` (none: no prefix bonus), skipping `excluded`. */
  figures(position?: number, excluded: ReadonlySet<Replica> = new Set()): ReplicaFigures[] {
    const now = this.now();
    const eligible = (replica: Replica) => !excluded.has(replica) && replica.isAvailable(now);
    const owner = position === undefined ? undefined : this.ring.walk(position, eligible);
    return this.replicas.map((replica) => ({
      eligible: eligible(replica),
      ...this.load.view(replica),
      outstanding: replica.outstanding,
      holdsPrefix: replica === owner,
    }));
  }

  /** The replica with the lowest score for a request at `position`; undefined when none is available. */
  pick(position?: number, excluded?: ReadonlySet<Replica>): Replica | undefined {
    const index = chooseReplica(this.figures(position, excluded), this.weights, {
      startAt: this.cursor,
      saturation: this.saturation,
    });
    if (index === undefined) return undefined;
    this.cursor = (index + 1) % this.replicas.length;
    return this.replicas[index];
  }

  hasRoom(): boolean {
    return this.saturation === undefined || fleetHasRoom(this.figures(), this.saturation);
  }

  onRoom(listener: () => void): () => void {
    return this.load.onReading(listener);
  }
}
