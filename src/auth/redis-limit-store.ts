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

const ACQUIRE = `
local count = redis.call('INCR', KEYS[1])
if count > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const RELEASE = `
local count = redis.call('DECR', KEYS[1])
if count <= 0 then redis.call('DEL', KEYS[1]) end
return count`;

/**
 * Slot counters expire this long after their last acquire: the safety net for slots that a
 * replica took and never gave back (it crashed). A counter in use keeps being refreshed.
 */
export const SLOT_TTL_MS = 10 * 60_000;

export interface RedisLimitStoreOptions {
  /** Prepended to every key, so several gateways (or tests) can share one Redis. */
  prefix?: string;
  /** How long a command may take; past it the caller fails open. */
  commandTimeoutMs?: number;
  /** Connection trouble; the store keeps reconnecting. */
  onError?: (error: Error) => void;
}

/**
 * Per-key limits shared by every gateway replica through Redis: a fixed window per key for
 * requests per minute (INCR, and PEXPIRE at the window's first request), and a slot counter
 * per key for concurrent streams (INCR/DECR with a TTL safety net).
 */
export class RedisLimitStore extends LimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, options: RedisLimitStoreOptions = {}) {
    super();
    this.prefix = options.prefix ?? 'gantry:limits:';
    this.redis = new Redis(url, {
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      maxRetriesPerRequest: 1,
    });
    this.redis.on('error', (error: Error) => options.onError?.(error));
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = (await this.redis.eval(HIT, 1, this.prefix + key, windowMs)) as [number, number];
    return { count, resetInMs: ttl };
  }

  async acquire(key: string, max: number): Promise<boolean> {
    return (await this.redis.eval(ACQUIRE, 1, this.prefix + key, max, SLOT_TTL_MS)) === 1;
  }

  async release(key: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.prefix + key);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
