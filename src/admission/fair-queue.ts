import type { AdmissionClaim, QueueOrder } from './admission-claim.js';
import { MinHeap, type HeapItem } from './min-heap.js';
import { WaitingList, type ListNode } from './waiting-list.js';

/** The output a tenant's request is expected to produce before the tenant's own average is known. */
const FIRST_OUTPUT_ESTIMATE = 256;
/** How fast the average output follows a tenant's latest requests (an exponential moving average). */
const OUTPUT_SMOOTHING = 1 / 8;

/** One request in a FairQueue: waiting, or admitted and not yet settled. */
export interface FairEntry extends ListNode<FairEntry> {
  readonly claim: AdmissionClaim;
  /** Arrival order, for first-come-first-served between equals. */
  seq?: number;
  /** The lane that was charged for it (set at admission). */
  lane?: TenantLane;
  /** What admission charged its lane, in the lane's service units (tokens / weight). */
  charged?: number;
}

/** A tenant's requests at one priority, and the service it received. */
class TenantLane implements HeapItem {
  heapIndex = -1;
  /** Service received: tokens divided by the weight (a virtual time: the least goes next). */
  served = 0;
  weight = 1;
  /** Its requests admitted and not yet settled. */
  running = 0;
  meanOutput = FIRST_OUTPUT_ESTIMATE;
  readonly interactive = new WaitingList<FairEntry>();
  readonly background = new WaitingList<FairEntry>();

  constructor(readonly level: PriorityLevel) {}

  get next(): FairEntry | undefined {
    return this.interactive.first ?? this.background.first;
  }

  get waiting(): number {
    return this.interactive.size + this.background.size;
  }

  /** Nothing waiting, nothing running: its service is out of date. */
  get idle(): boolean {
    return this.running === 0 && this.waiting === 0;
  }
}

/** The tenants of one priority: those with waiting requests in a heap by service, then arrival. */
class PriorityLevel {
  readonly lanes = new Map<string, TenantLane>();
  readonly backlogged = new MinHeap<TenantLane>(
    (a, b) => a.served < b.served || (a.served === b.served && a.next!.seq! < b.next!.seq!),
  );
  /** The service of the lane last admitted from here: where a tenant coming back from idle starts. */
  virtualTime = 0;

  constructor(readonly priority: number) {}
}

/**
 * The order in which a contended model admits its waiting requests. `fair`: the highest
 * priority first (strict); within it, the tenant that received the least service relative to its
 * weight (tokens / weight: a virtual token counter per tenant); within a tenant, interactive
 * requests first come, first served, then background runs. `fifo`: arrival order, nothing else.
 *
 * Charging: a request's cost is known only at its end, so admission charges an estimate (the
 * prompt's estimated tokens plus the tenant's average output, at most the request's max_tokens),
 * and `settle` corrects it with what the engine reported. A tenant that becomes backlogged
 * (nothing of it waiting, whatever it has running) starts where the last admission of its
 * priority started: it banks no credit. Every operation is O(log t) for t tenants with waiting requests (plus the few
 * priority levels), whatever the number waiting.
 */
export class FairQueue {
  private levels: PriorityLevel[] = [];
  private readonly byPriority = new Map<number, PriorityLevel>();
  private nextSeq = 0;
  private count = 0;

  constructor(private order: QueueOrder = 'fair') {}

  get size(): number {
    return this.count;
  }

  /** Heap comparisons made so far: the operations' cost, for tests. */
  get comparisons(): number {
    return this.levels.reduce((sum, level) => sum + level.backlogged.comparisons, 0);
  }

  /** Puts a request in line. */
  enqueue(entry: FairEntry): void {
    entry.seq ??= this.nextSeq++;
    const lane = this.laneOf(entry.claim);
    const wasIdle = lane.waiting === 0;
    // Lifted as it becomes backlogged, whatever it has running (VTC): see wake.
    if (wasIdle) this.wake(lane);
    const before = lane.next;
    (this.order === 'fair' && entry.claim.background ? lane.background : lane.interactive).push(entry);
    entry.lane = lane;
    this.count += 1;
    if (wasIdle) lane.level.backlogged.push(lane);
    else if (lane.next !== before) lane.level.backlogged.update(lane);
  }

  /** Takes a waiting request out of line (it hung up or timed out); false when it was not waiting. */
  leave(entry: FairEntry): boolean {
    const lane = entry.lane;
    if (lane === undefined || entry.list === undefined) return false;
    const wasNext = lane.next === entry;
    entry.list.remove(entry);
    this.count -= 1;
    if (lane.waiting === 0) lane.level.backlogged.remove(lane);
    else if (wasNext) lane.level.backlogged.update(lane);
    return true;
  }

  /** The next request to admit, charged to its tenant; undefined when none waits. */
  dequeue(): FairEntry | undefined {
    for (const level of this.levels) {
      const lane = level.backlogged.peek();
      if (lane === undefined) continue;
      const entry = lane.next!;
      entry.list!.remove(entry);
      this.count -= 1;
      this.charge(lane, entry);
      if (lane.waiting === 0) level.backlogged.remove(lane);
      else level.backlogged.update(lane);
      return entry;
    }
    return undefined;
  }

  /** Charges a request admitted without waiting (a slot was free and nobody waited). */
  admitNow(entry: FairEntry): void {
    const lane = this.laneOf(entry.claim);
    if (lane.idle) this.wake(lane);
    entry.lane = lane;
    this.charge(lane, entry);
  }

  /** Corrects an admitted request's charge with the tokens it really used (its claim's `served`). */
  settle(entry: FairEntry): void {
    const lane = entry.lane;
    if (lane === undefined || entry.charged === undefined) return;
    const { claim } = entry;
    const used =
      claim.served === undefined ? claim.promptTokens : claim.served.promptTokens + claim.served.completionTokens;
    if (claim.served !== undefined)
      lane.meanOutput += (claim.served.completionTokens - lane.meanOutput) * OUTPUT_SMOOTHING;
    lane.served += Math.max(1, used) / lane.weight - entry.charged;
    lane.running -= 1;
    entry.charged = undefined;
    lane.level.backlogged.update(lane);
  }

  /** A new order (a reloaded configuration): the waiting requests keep their arrival order. */
  setOrder(order: QueueOrder): void {
    if (order === this.order) return;
    const waiting: FairEntry[] = [];
    for (const level of this.levels) {
      for (const lane of level.lanes.values()) {
        for (let entry = lane.interactive.first; entry; entry = entry.next) waiting.push(entry);
        for (let entry = lane.background.first; entry; entry = entry.next) waiting.push(entry);
      }
    }
    for (const entry of waiting) this.leave(entry);
    this.order = order;
    waiting.sort((a, b) => a.seq! - b.seq!);
    for (const entry of waiting) this.enqueue(entry);
  }

  private charge(lane: TenantLane, entry: FairEntry): void {
    const { claim } = entry;
    lane.level.virtualTime = Math.max(lane.level.virtualTime, lane.served);
    const estimate = Math.max(1, claim.promptTokens + Math.min(claim.maxTokens ?? Infinity, lane.meanOutput));
    entry.charged = estimate / lane.weight;
    lane.served += entry.charged;
    lane.running += 1;
  }

  /**
   * A lane that becomes backlogged (nothing of it waited) starts no lower than the service of the
   * lane last admitted at its level (that lane's start, before its charge, as in start-time fair
   * queueing), even with requests running: neither idle time nor a long answer charged only its
   * estimate banks credit for a later burst (VTC, docs/operations.md#tenants), and a newcomer is
   * not made to wait behind the busy tenants' running requests either.
   */
  private wake(lane: TenantLane): void {
    lane.served = Math.max(lane.served, lane.level.virtualTime);
  }

  private laneOf(claim: AdmissionClaim): TenantLane {
    const fair = this.order === 'fair';
    const level = this.levelOf(fair ? claim.priority : 0);
    const tenant = fair ? claim.tenant : '';
    let lane = level.lanes.get(tenant);
    if (lane === undefined) {
      lane = new TenantLane(level);
      level.lanes.set(tenant, lane);
    }
    if (fair) lane.weight = claim.weight;
    return lane;
  }

  private levelOf(priority: number): PriorityLevel {
    let level = this.byPriority.get(priority);
    if (level === undefined) {
      level = new PriorityLevel(priority);
      this.byPriority.set(priority, level);
      this.levels = [...this.levels, level].sort((a, b) => b.priority - a.priority);
    }
    return level;
  }
}
