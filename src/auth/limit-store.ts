/** A window's count after one more request, and when the window closes. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/** Tokens to add to one window (a token budget), opened for `windowMs` by its first charge. */
export interface WindowCharge {
  key: string;
  amount: number;
  windowMs: number;
}

/** What a failure was doing, the label of `gantry_limit_store_errors_total`. */
export type LimitStoreOperation = 'hit' | 'acquire' | 'release' | 'renew' | 'peek' | 'charge' | 'connection';

/**
 * Where per-key limits are counted: in this process (MemoryLimitStore) or shared by every
 * replica (RedisLimitStore). Keys are opaque strings (key ids, never API keys).
 */
export abstract class LimitStore {
  private failureListener?: (operation: LimitStoreOperation, error: Error) => void;

  /** Counts one request in `key`'s window, which opens at its first request and lasts `windowMs`. */
  abstract hit(key: string, windowMs: number): Promise<WindowCount>;

  /** Each window's count as it stands, and when it closes (0 and 0 for a window not open). Counts nothing. */
  abstract peek(keys: readonly string[]): Promise<WindowCount[]>;

  /** Adds each charge to its window, in one step (atomically where the store is shared). */
  abstract charge(charges: readonly WindowCharge[]): Promise<void>;

  /**
   * Takes one of `max` slots of `key` as a lease; undefined (and nothing taken) when all are
   * taken. A lease is held until released, or until its holder stops renewing it (it crashed).
   * When the call fails, the caller holds nothing: a lease the store took anyway (the answer came
   * too late) is given back by the store itself.
   */
  abstract acquire(key: string, max: number): Promise<string | undefined>;

  /**
   * Gives back a lease taken by `acquire`; releasing it twice gives back nothing more. When the
   * call fails, the store keeps trying in the background until the lease is given back.
   */
  abstract release(key: string, lease: string): Promise<void>;

  abstract close(): Promise<void>;

  /**
   * Where the store reports the failures no caller sees (renewals, releases retried in the
   * background, the connection). One listener: the limiter, which counts and logs them.
   */
  onFailure(listener: (operation: LimitStoreOperation, error: Error) => void): void {
    this.failureListener = listener;
  }

  protected reportFailure(operation: LimitStoreOperation, error: Error): void {
    this.failureListener?.(operation, error);
  }
}

/**
 * The store that `store: memory` uses when one is shared by the whole instance (a worker of
 * several: the primary's); absent in a single process, which counts in a MemoryLimitStore.
 */
export abstract class InstanceLimitStore extends LimitStore {}
