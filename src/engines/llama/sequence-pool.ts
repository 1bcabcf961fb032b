interface Waiter<T> {
  prompt: readonly number[];
  resolve: (item: T) => void;
  reject: (reason: unknown) => void;
}

/**
 * The context's sequences, lent to one generation at a time. A request that finds none free
 * waits in FIFO order (normally the admission queue keeps requests out until one is free, but a
 * cancelled generation returns its sequence only after its last decode step settles).
 *
 * Invariant: an idle sequence is lent to the longest-waiting request, choosing among idle ones
 * the sequence whose cached tokens share the longest prefix with the prompt (llama.cpp server's
 * slot choice), so a follow-up turn reuses its KV cache.
 */
export class SequencePool<T> {
  private readonly idle: T[];
  private readonly waiters: Array<Waiter<T>> = [];
  private closedWith?: Error;

  constructor(
    sequences: readonly T[],
    /** How many leading tokens of `prompt` the sequence already holds. */
    private readonly sharedPrefix: (sequence: T, prompt: readonly number[]) => number,
  ) {
    this.idle = [...sequences];
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** A sequence for `prompt`, once one is free; rejects when `signal` aborts or the pool closes. */
  acquire(prompt: readonly number[], signal?: AbortSignal): Promise<T> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.idle.length > 0 && this.waiters.length === 0) return Promise.resolve(this.take(prompt));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = { prompt, resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const index = this.waiters.indexOf(waiter);
          if (index === -1) return;
          this.waiters.splice(index, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason }));
        },
        { once: true },
      );
    });
  }

  release(sequence: T): void {
    this.idle.push(sequence);
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(this.take(waiter.prompt));
  }

  /** Refuses new and waiting requests (shutdown); lent sequences still come back through release. */
  close(reason: Error): void {
    this.closedWith = reason;
    for (const waiter of this.waiters.splice(0)) waiter.reject(reason);
  }

  private take(prompt: readonly number[]): T {
    let best = 0;
    let bestShared = -1;
    this.idle.forEach((sequence, index) => {
      const shared = this.sharedPrefix(sequence, prompt);
      if (shared > bestShared) {
        best = index;
        bestShared = shared;
      }
    });
    return this.idle.splice(best, 1)[0];
  }
}
