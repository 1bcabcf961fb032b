import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LimitStore, type WindowCount } from './limit-store.js';

// Each script runs atomically in Redis, so concurrent replicas never interleave a read and a write.
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

// A key's slots are a sorted set of leases scored by their expiry (Redis time, so replicas' clocks
// do not matter): expired leases are dropped before counting.
const ACQUIRE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// Pushes the expiry of leases still held (XX: a lease already released or expired stays gone).
const RENEW = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for index = 1, #KEYS do
  redis.call('ZADD', KEYS[index], 'XX', nowMs + tonumber(ARGV[1]), ARGV[index + 1])
  redis.call('PEXPIRE', KEYS[index], ARGV[1])
end
return #KEYS`;

/**
 * How long a lease lives without renewal: the safety net for slots whose replica died holding
 * them. A replica renews its live leases every third of it, so streams of any length keep theirs.
 */
export const LEASE_TTL_MS = 60_000;

export interface RedisLimitStoreOptions {
  /** Prepended to every key, so several gateways (or tests) can share one Redis. */
  prefix?: string;
  /** How long a command may take; past it the caller fails open. */
  commandTimeoutMs?: number;
  /** Connection trouble; the store keeps reconnecting. */
  onError?: (error: Error) => void;
  /** Lease lifetime without renewal (LEASE_TTL_MS); tests shorten it. */
  leaseTtlMs?: number;
}

/**
 * Per-key limits shared by every gateway replica through Redis: a fixed window per key for
 * requests per minute (INCR, and PEXPIRE at the window's first request), and leases per key for
 * concurrent streams (a sorted set of leases that expire unless their replica renews them).
 */
export class RedisLimitStore extends LimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly leaseTtlMs: number;
  /** Leases this replica holds, by lease id: renewed together on one timer. */
  private readonly held = new Map<string, string>();
  private readonly renewal: NodeJS.Timeout;

  constructor(url: string, options: RedisLimitStoreOptions = {}) {
    super();
    this.prefix = options.prefix ?? 'gantry:limits:';
    this.redis = new Redis(url, {
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      maxRetriesPerRequest: 1,
    });
    this.redis.on('error', (error: Error) => options.onError?.(error));
    this.leaseTtlMs = options.leaseTtlMs ?? LEASE_TTL_MS;
    this.renewal = setInterval(() => void this.renew().catch((error: Error) => options.onError?.(error)), this.leaseTtlMs / 3);
    this.renewal.unref();
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = (await this.redis.eval(HIT, 1, this.prefix + key, windowMs)) as [number, number];
    return { count, resetInMs: ttl };
  }

  async acquire(key: string, max: number): Promise<string | undefined> {
    const lease = randomUUID();
    if ((await this.redis.eval(ACQUIRE, 1, this.prefix + key, max, lease, this.leaseTtlMs)) !== 1) return undefined;
    this.held.set(lease, this.prefix + key);
    return lease;
  }

  async release(key: string, lease: string): Promise<void> {
    this.held.delete(lease);
    await this.redis.zrem(this.prefix + key, lease);
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const leases = [...this.held.keys()];
    await this.redis.eval(RENEW, leases.length, ...leases.map((lease) => this.held.get(lease)!), this.leaseTtlMs, ...leases);
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
