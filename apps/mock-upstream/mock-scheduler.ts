/**
 * vLLM's scheduling, as the mock plays it: at most `maxRunning` requests run at once (0: no
 * limit), the rest wait in one first-come, first-served queue, and a request that leaves while
 * waiting gives up its place. A running request's time is its prefill and its decode (its tokens
 * times `tokenIntervalMs`), so a full replica makes newcomers wait for whole answers.
 */
export class MockScheduler {
  private runningCount = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly maxRunning: () => number) {}

  get running(): number {
    return this.runningCount;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with the request's release once it may run; rejects when `signal` aborts first
   * (the client left while it waited). Call the release once, when the request ends.
   */
  admit(signal: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const start = () => {
        signal.removeEventListener('abort', leave);
        this.runningCount += 1;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.runningCount -= 1;
          this.next();
        });
      };
      const leave = () => {
        const index = this.waiting.indexOf(start);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal.reason as Error);
      };
      if (signal.aborted) return leave();
      if (this.hasSlot() && this.waiting.length === 0) return start();
      this.waiting.push(start);
      signal.addEventListener('abort', leave, { once: true });
    });
  }

  private hasSlot(): boolean {
    const limit = this.maxRunning();
    return limit <= 0 || this.runningCount < limit;
  }

  private next(): void {
    while (this.waiting.length > 0 && this.hasSlot()) this.waiting.shift()!();
  }
}
