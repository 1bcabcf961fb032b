import { LimitStore, type WindowCharge, type WindowCount } from './limit-store.js';

/** Per-key limits counted in this process: right for one replica, or for limits per replica. */
export class MemoryLimitStore extends LimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly slots = new Map<string, Set<string>>();
  private nextLease = 0;

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.add(key, 1, windowMs);
  }

  async peek(keys: readonly string[]): Promise<WindowCount[]> {
    const now = this.now();
    return keys.map((key) => {
      const window = this.windows.get(key);
      return window === undefined || window.resetAt <= now
        ? { count: 0, resetInMs: 0 }
        : { count: window.count, resetInMs: window.resetAt - now };
    });
  }

  async charge(charges: readonly WindowCharge[]): Promise<void> {
    for (const { key, amount, windowMs } of charges) this.add(key, amount, windowMs);
  }

  private add(key: string, amount: number, windowMs: number): WindowCount {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += amount;
    return { count: window.count, resetInMs: window.resetAt - now };
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
