/**
 * A warning about a failure that repeats (a store that is down fails every request): the first
 * is logged at once, then at most one per interval, each counting the failures since the last.
 */
export class ThrottledWarning {
  private warnedAt = -Infinity;
  /** Failures since the last warning. */
  private unwarned = 0;

  constructor(
    private readonly warn: (message: string) => void,
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one failure and logs `message(more)` unless a warning went out within the interval;
   * `more` is empty, or says how many failures the warning covers. True when it logged.
   */
  failure(message: (more: string) => string): boolean {
    this.unwarned += 1;
    const now = this.now();
    if (now - this.warnedAt < this.intervalMs) return false;
    this.warn(message(this.unwarned > 1 ? ` (${this.unwarned} failures since the last warning)` : ''));
    this.warnedAt = now;
    this.unwarned = 0;
    return true;
  }
}
