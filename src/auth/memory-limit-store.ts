import { LimitStore, type WindowCount } from './limit-store.js';

/** Per-key limits counted in this process: right for one replica, or for limits per replica. */
export class MemoryLimitStore extends LimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly slots = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  async acquire(key: string, max: number): Promise<boolean> {
    const taken = this.slots.get(key) ?? 0;
    if (taken >= max) return false;
    this.slots.set(key, taken + 1);
    return true;
  }

  async release(key: string): Promise<void> {
    const taken = (this.slots.get(key) ?? 0) - 1;
    if (taken > 0) this.slots.set(key, taken);
    else this.slots.delete(key);
  }

  async close(): Promise<void> {}
}
