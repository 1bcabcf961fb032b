import { randomUUID } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import { LIMITS_REDIS } from '../config/redis-parts.js';
import {
  LimitStore,
  type BudgetWindow,
  type Reservation,
  type ReservationAsk,
  type ReservationRefusal,
  type WindowCount,
} from './limit-store.js';
import { HIT, RESERVE, SETTLE } from './redis-limit-scripts.js';

// A key's slots are a sorted set of leases scored by their expiry (Redis time, so replicas' clocks
// do not matter): expired leases are dropped before counting. Past its deadline (ARGV[4], Redis
// time; 0 for none) the caller has given up, so a late acquire takes nothing. Returns
// {1 taken | 0 full | -1 too late, Redis time}.
const ACQUIRE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local deadline = tonumber(ARGV[4])
if deadline > 0 and nowMs > deadline then return {-1, nowMs} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return {0, nowMs} end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, nowMs}`;

// Pushes the expiry of leases still held (XX: a lease already released or expired stays gone).
const RENEW = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for index = 1, #KEYS do
  redis.call('ZADD', KEYS[index], 'XX', nowMs + tonumber(ARGV[1]), ARGV[index + 1])
  redis.call('PEXPIRE', KEYS[index], ARGV[1])
end
return #KEYS`;

// Gives back leases of any keys: KEYS[i] holds ARGV[i].
const RELEASE_MANY = `
for index = 1, #KEYS do
  redis.call('ZREM', KEYS[index], ARGV[index])
end
return #KEYS`;

/**
 * How long a lease lives without renewal: the safety net for slots whose replica died holding
 * them. A replica renews its live leases every third of it, so streams of any length keep theirs.
 */
export const LEASE_TTL_MS = 60_000;

/** Leases waiting to be given back, at most; past it the lease TTL frees the rest. */
const MAX_ORPHANS = 10_000;
const RELEASE_BATCH = 500;

export interface RedisLimitStoreOptions {
  /** Prepended to every key, so several gateways (or tests) can share one Redis. */
  prefix?: string;
  /** How long a command may take (LIMITS_REDIS.timeoutMs by default); past it the caller fails open. */
  commandTimeoutMs?: number;
  /** Lease lifetime without renewal (LEASE_TTL_MS); tests shorten it. */
  leaseTtlMs?: number;
}

/** Milliseconds on a clock that never steps back (unlike Date.now). */
const clock = () => performance.timeOrigin + performance.now();

/**
 * Per-key limits shared by every gateway replica through Redis: a sliding window per key for
 * requests per minute, token budgets the same way (a request's worst case reserved in one script
 * at admission, settled to its real use at its end: redis-limit-scripts.ts), and leases per key
 * for concurrent streams (a sorted set of leases that expire unless their replica renews them).
 *
 * A limit command must not outlive the request it decides, or an outage leaves slots taken that
 * nobody gives back. So no command waits for a connection or is sent again after a reconnect;
 * each has one short timeout; after a timeout, nothing more is sent until Redis answers again
 * (calls fail at once meanwhile); an acquire past its deadline takes nothing; and a lease taken
 * for a caller that had given up, or whose release failed, is given back once Redis answers.
 */
export class RedisLimitStore extends LimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly leaseTtlMs: number;
  private readonly timeoutMs: number;
  /** Leases this replica holds, by lease id (value: the Redis key): renewed together on one timer. */
  private readonly held = new Map<string, string>();
  /** Leases to give back once Redis answers, by lease id (value: the Redis key). */
  private readonly orphans = new Map<string, string>();
  private flushing = false;
  /** A command went unanswered past its timeout, and no reply has come since. */
  private stalled = false;
  private everReady = false;
  private readonly firstReady: Promise<void>;
  /**
   * Redis's clock minus ours, as the largest lower bound seen in replies (Redis time at execution
   * minus ours at receipt): deadlines built on it are never later than our own timeout.
   */
  private redisLeadMs?: number;
  private readonly renewal: NodeJS.Timeout;

  constructor(url: string, options: RedisLimitStoreOptions = {}) {
    super();
    this.prefix = options.prefix ?? LIMITS_REDIS.keyPrefix;
    this.timeoutMs = options.commandTimeoutMs ?? LIMITS_REDIS.timeoutMs;
    this.leaseTtlMs = options.leaseTtlMs ?? LEASE_TTL_MS;
    this.redis = new Redis(url, {
      // No offline queue, no resending after a reconnect, no retries: a command runs now or never.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(attempt * 50, 500),
      // A Redis that stops answering (host gone, no reset) is dropped and reconnected.
      socketTimeout: Math.max(5_000, this.timeoutMs * 10),
    });
    this.redis.on('error', (error: Error) => this.reportFailure('connection', error));
    this.firstReady = new Promise((resolve) => this.redis.once('ready', () => resolve()));
    this.redis.on('ready', () => {
      this.everReady = true;
      this.stalled = false;
      // Possibly another server now (a failover): its clock is learned afresh.
      this.redisLeadMs = undefined;
      this.flushOrphans();
    });
    this.renewal = setInterval(() => {
      this.flushOrphans();
      void this.renew().catch((error: Error) => this.reportFailure('renew', error));
    }, this.leaseTtlMs / 3);
    this.renewal.unref();
  }

  async hit(key: string, windowMs: number, limit: number): Promise<WindowCount> {
    const [count, resetInMs] = await this.send(
      () => this.redis.eval(HIT, 1, this.prefix + key, windowMs, limit) as Promise<[number, number]>,
    );
    return { count, resetInMs };
  }

  async reserve(ask: ReservationAsk): Promise<Reservation | ReservationRefusal> {
    const { budgets } = ask;
    const reply = await this.send(
      () =>
        this.redis.eval(
          RESERVE,
          budgets.length,
          ...budgets.map(({ key }) => this.prefix + key),
          Math.ceil(ask.promptTokens),
          ask.maxTokens ?? -1,
          ask.outputCap ?? -1,
          ...budgets.flatMap(({ limit, windowMs }) => [limit, windowMs]),
        ) as Promise<number[]>,
    );
    if (reply[0] === 0) return { refusedBy: reply[1] - 1, retryInMs: reply[2] };
    return { outputTokens: reply[1], reserved: reply[2], slices: reply.slice(3) };
  }

  async settle(budgets: readonly BudgetWindow[], reservation: Reservation, used: number): Promise<void> {
    if (budgets.length === 0) return;
    await this.send(() =>
      this.redis.eval(
        SETTLE,
        budgets.length,
        ...budgets.map(({ key }) => this.prefix + key),
        Math.round(used) - reservation.reserved,
        ...reservation.slices,
      ),
    );
  }

  async acquire(key: string, max: number): Promise<string | undefined> {
    await this.ready();
    const lease = randomUUID();
    const redisKey = this.prefix + key;
    const deadline = this.redisLeadMs === undefined ? 0 : Math.floor(clock() + this.redisLeadMs + this.timeoutMs);
    const [taken] = await this.send(
      async () => {
        const reply = (await this.redis.eval(ACQUIRE, 1, redisKey, max, lease, this.leaseTtlMs, deadline)) as [
          number,
          number,
        ];
        this.redisLeadMs = Math.max(this.redisLeadMs ?? -Infinity, reply[1] - clock());
        return reply;
      },
      {
        // The caller was told it failed: a lease taken anyway is nobody's.
        late: ([lateTaken]) => {
          if (lateTaken === 1) this.orphan(lease, redisKey);
        },
        lost: () => this.orphan(lease, redisKey),
      },
    );
    if (taken === -1) throw new Error('Redis ran the acquire past its deadline');
    if (taken !== 1) return undefined;
    this.held.set(lease, redisKey);
    return lease;
  }

  async release(key: string, lease: string): Promise<void> {
    this.held.delete(lease);
    const redisKey = this.prefix + key;
    try {
      await this.send(() => this.redis.zrem(redisKey, lease));
    } catch (error) {
      // ZREM is idempotent: given back again once Redis answers, whatever became of this one.
      this.orphan(lease, redisKey);
      throw error;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    // QUIT is answered after what was sent before it; a Redis that does not answer is not waited for.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.redis.quit().catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs * 2))),
    ]);
    clearTimeout(timer);
    this.redis.disconnect();
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0 || !this.usable) return;
    const leases = [...this.held.keys()];
    await this.send(() =>
      this.redis.eval(
        RENEW,
        leases.length,
        ...leases.map((lease) => this.held.get(lease)!),
        this.leaseTtlMs,
        ...leases,
      ),
    );
  }

  private get usable(): boolean {
    return this.redis.status === 'ready' && !this.stalled;
  }

  /** Until the first connection is up, a call waits for it (within its timeout); later, never. */
  private async ready(): Promise<void> {
    if (this.everReady || !['wait', 'connecting', 'connect'].includes(this.redis.status)) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.firstReady, new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs)))]);
    clearTimeout(timer);
  }

  /**
   * Sends one command now, or fails at once when Redis is not connected or has left one
   * unanswered; fails after the timeout without an answer. `late` sees an answer that came after
   * the timeout; `lost` a command that may have run but whose answer will never come.
   */
  private async send<T>(
    command: () => Promise<T>,
    after: { late?: (reply: T) => void; lost?: () => void } = {},
  ): Promise<T> {
    await this.ready();
    if (this.redis.status !== 'ready') throw new Error(`Redis is not connected (${this.redis.status})`);
    if (this.stalled) throw new Error('Redis has not answered since a command timed out');
    let timedOut = false;
    const reply = command();
    reply.then(
      (value) => {
        this.answered();
        if (timedOut) after.late?.(value);
      },
      (error: Error) => {
        this.answered();
        // A reply error is an answer (the command ran or was refused); anything else may have run.
        if (!(error instanceof ReplyError)) after.lost?.();
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        this.stalled = true;
        reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([reply, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Any reply, or the end of the connection: Redis no longer holds a command of ours unanswered. */
  private answered(): void {
    if (!this.stalled) return;
    this.stalled = false;
    this.flushOrphans();
  }

  private orphan(lease: string, redisKey: string): void {
    if (this.orphans.size < MAX_ORPHANS) this.orphans.set(lease, redisKey);
    this.flushOrphans();
  }

  /** Gives back the orphaned leases, a batch at a time, while Redis answers. */
  private flushOrphans(): void {
    if (this.flushing || this.orphans.size === 0 || !this.usable) return;
    this.flushing = true;
    const batch = [...this.orphans].slice(0, RELEASE_BATCH);
    this.send(() =>
      this.redis.eval(
        RELEASE_MANY,
        batch.length,
        ...batch.map(([, redisKey]) => redisKey),
        ...batch.map(([lease]) => lease),
      ),
    ).then(
      () => {
        for (const [lease] of batch) this.orphans.delete(lease);
        this.flushing = false;
        this.flushOrphans();
      },
      (error: Error) => {
        this.flushing = false;
        this.reportFailure('release', error);
      },
    );
  }
}
