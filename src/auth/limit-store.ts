/** A window's count with one more request, and in how many ms it has room for one more. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/** One token budget's sliding window in the store: its key, its limit and its length. */
export interface BudgetWindow {
  key: string;
  limit: number;
  windowMs: number;
}

/** What a request asks of its token budgets: its prompt, and its output. */
export interface ReservationAsk {
  budgets: readonly BudgetWindow[];
  /** The prompt's tokens (estimated). */
  promptTokens: number;
  /** The output the request asked for; undefined: as much as every budget has left, at most `outputCap`. */
  maxTokens?: number;
  outputCap?: number;
}

/** What is held for a granted request until it settles: its amount, in each budget's slice. */
export interface Reservation {
  /** The output it may produce (its max_tokens, or what the budgets left it). */
  outputTokens: number;
  /** Tokens held: prompt + output. */
  reserved: number;
  /** The slice each budget holds them in (sliding-window.ts). */
  slices: number[];
}

/** A reservation that does not fit: the budget that refused (an index into the ask's), and when it would. */
export interface ReservationRefusal {
  refusedBy: number;
  retryInMs: number;
}

/** What a failure was doing, the label of `gantry_limit_store_errors_total`. */
export type LimitStoreOperation = 'hit' | 'acquire' | 'release' | 'renew' | 'reserve' | 'settle' | 'connection';

/**
 * Where per-key limits are counted: in this process (MemoryLimitStore) or shared by every
 * replica (RedisLimitStore). Keys are opaque strings (key ids, never API keys).
 */
export abstract class LimitStore {
  private failureListener?: (operation: LimitStoreOperation, error: Error) => void;

  /**
   * Counts one request in `key`'s sliding window of `windowMs` when it fits under `limit` (a
   * refused one is not counted): the count with it, and when there is room for one more.
   */
  abstract hit(key: string, windowMs: number, limit: number): Promise<WindowCount>;

  /**
   * Holds a request's worst case (prompt + output) in every budget's sliding window in one step
   * (atomically where the store is shared), or refuses it, holding nothing, when one has not
   * room for it. An ask without `maxTokens` gets what every budget has left beyond the prompt
   * (at least 1, at most `outputCap`).
   */
  abstract reserve(ask: ReservationAsk): Promise<Reservation | ReservationRefusal>;

  /** Brings a reservation to the tokens really `used` (prompt + output), in the slices it was held in. */
  abstract settle(budgets: readonly BudgetWindow[], reservation: Reservation, used: number): Promise<void>;

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
