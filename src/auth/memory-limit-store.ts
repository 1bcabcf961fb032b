import {
  LimitStore,
  type BudgetWindow,
  type Reservation,
  type ReservationAsk,
  type ReservationRefusal,
  type WindowCount,
} from './limit-store.js';
import { addTo, countOf, roomInMs, sliceAt, type Slices } from './sliding-window.js';

/** Per-key limits counted in this process: right for one replica, or for limits per replica. */
export class MemoryLimitStore extends LimitStore {
  private readonly windows = new Map<string, Slices>();
  private readonly slots = new Map<string, Set<string>>();
  private nextLease = 0;

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    const now = this.now();
    const slices = this.slicesOf(key);
    const count = countOf(slices, now, windowMs) + 1;
    if (count <= limit) addTo(slices, sliceAt(now, windowMs), 1);
    this.forgetEmpty(key, slices);
    return { count, resetInMs: roomInMs(slices, now, windowMs, limit, 1) };
  }

  /** What a window holds now (for tests and diagnostics: counts nothing). */
  held(key: string, windowMs: number): number {
    const slices = this.windows.get(key);
    return slices === undefined ? 0 : countOf(slices, this.now(), windowMs);
  }

  async reserve(ask: ReservationAsk): Promise<Reservation | ReservationRefusal> {
    return reserveIn(ask, this.now(), (key) => this.slicesOf(key));
  }

  async settle(budgets: readonly BudgetWindow[], reservation: Reservation, used: number): Promise<void> {
    budgets.forEach(({ key }, index) => {
      const slices = this.windows.get(key);
      if (slices === undefined) return;
      addTo(slices, reservation.slices[index], used - reservation.reserved);
      this.forgetEmpty(key, slices);
    });
  }

  private slicesOf(key: string): Slices {
    let slices = this.windows.get(key);
    if (slices === undefined) {
      slices = new Map();
      this.windows.set(key, slices);
    }
    return slices;
  }

  private forgetEmpty(key: string, slices: Slices): void {
    if (slices.size === 0) this.windows.delete(key);
  }

  async acquire(key: string, max: number): Promise<string | undefined> {
    let leases = this.slots.get(key);
    if (leases === undefined) {
      leases = new Set();
      this.slots.set(key, leases);
    }
    if (leases.size >= max) return undefined;
    const lease = String((this.nextLease += 1));
    leases.add(lease);
    return lease;
  }

  async release(key: string, lease: string): Promise<void> {
    const leases = this.slots.get(key);
    leases?.delete(lease);
    if (leases?.size === 0) this.slots.delete(key);
  }

  async close(): Promise<void> {}
}

/**
 * The reservation of `ask` at `now` in the windows `slicesOf` gives, done in one synchronous
 * step: the same rule as the Redis store's script (redis-limit-scripts.ts).
 */
export function reserveIn(
  ask: ReservationAsk,
  now: number,
  slicesOf: (key: string) => Slices,
): Reservation | ReservationRefusal {
  const windows = ask.budgets.map((budget) => ({ budget, slices: slicesOf(budget.key) }));
  const left = Math.min(...windows.map(({ budget, slices }) => budget.limit - countOf(slices, now, budget.windowMs)));
  const need = ask.promptTokens + (ask.maxTokens ?? 1);
  if (need > left) {
    let refusedBy = 0;
    let retryInMs = 0;
    windows.forEach(({ budget, slices }, index) => {
      const wait = roomInMs(slices, now, budget.windowMs, budget.limit, need);
      if (wait > retryInMs) [refusedBy, retryInMs] = [index, wait];
    });
    return { refusedBy, retryInMs: Math.max(1, retryInMs) };
  }
  const outputTokens = ask.maxTokens ?? Math.min(left - ask.promptTokens, ask.outputCap ?? Infinity);
  const reserved = ask.promptTokens + outputTokens;
  const slices = windows.map(({ budget, slices: held }) => {
    const slice = sliceAt(now, budget.windowMs);
    addTo(held, slice, reserved);
    return slice;
  });
  return { outputTokens, reserved, slices };
}
