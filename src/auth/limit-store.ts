/** A window's count after one more request, and when the window closes. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/**
 * Where per-key limits are counted: in this process (MemoryLimitStore) or shared by every
 * replica (RedisLimitStore). Keys are opaque strings (key ids, never API keys).
 */
export abstract class LimitStore {
  /** Counts one request in `key`'s window, which opens at its first request and lasts `windowMs`. */
  abstract hit(key: string, windowMs: number): Promise<WindowCount>;

  /**
   * Takes one of `max` slots of `key` as a lease; undefined (and nothing taken) when all are
   * taken. A lease is held until released, or until its holder stops renewing it (it crashed).
   */
  abstract acquire(key: string, max: number): Promise<string | undefined>;

  /** Gives back a lease taken by `acquire`; releasing it twice gives back nothing more. */
  abstract release(key: string, lease: string): Promise<void>;

  abstract close(): Promise<void>;
}
