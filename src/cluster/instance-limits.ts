import type {
  BudgetWindow,
  Reservation,
  ReservationAsk,
  ReservationRefusal,
  WindowCount,
} from '../auth/limit-store.js';
import { MemoryLimitStore } from '../auth/memory-limit-store.js';

/**
 * The per-key limits of `store: memory` for the whole instance, held by the primary: one
 * MemoryLimitStore that every worker asks, with each lease remembered by the worker that took it,
 * so that a dead worker's leases come back at once.
 */
export class InstanceLimits {
  private readonly store = new MemoryLimitStore();
  private readonly leases = new Map<number, Map<string, string>>();

  hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    return this.store.hit(key, windowMs, limit);
  }

  /** One step in the primary, whichever worker asks: reservations from every worker never overlap. */
  reserve(ask: ReservationAsk): Promise<Reservation | ReservationRefusal> {
    return this.store.reserve(ask);
  }

  settle(budgets: readonly BudgetWindow[], reservation: Reservation, used: number): Promise<void> {
    return this.store.settle(budgets, reservation, used);
  }

  async acquire(worker: number, key: string, max: number): Promise<string | undefined> {
    const lease = await this.store.acquire(key, max);
    if (lease !== undefined) this.leasesOf(worker).set(lease, key);
    return lease;
  }

  async release(worker: number, key: string, lease: string): Promise<void> {
    this.leases.get(worker)?.delete(lease);
    await this.store.release(key, lease);
  }

  /** Gives back every lease a worker held (it died). */
  async releaseWorker(worker: number): Promise<number> {
    const held = this.leases.get(worker);
    this.leases.delete(worker);
    if (!held) return 0;
    await Promise.all([...held].map(([lease, key]) => this.store.release(key, lease)));
    return held.size;
  }

  private leasesOf(worker: number): Map<string, string> {
    let held = this.leases.get(worker);
    if (!held) {
      held = new Map();
      this.leases.set(worker, held);
    }
    return held;
  }
}
