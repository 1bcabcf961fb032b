import type { GatewayConfig } from './gateway-config.js';
import { PartRedisConfig, RedisConfig } from './redis-config.js';

/** A part's section as far as its Redis goes: its store, its own Redis, and the keys `redis:` replaced. */
interface RedisPartSection {
  store: string;
  redis?: PartRedisConfig;
  redisUrl?: string;
  redisKeyPrefix?: string;
  redisTimeoutMs?: number;
}

/** A part's Redis defaults: its key prefix under `redis.keyPrefix`'s default, and its command timeout. */
export interface PartRedisDefaults {
  keyPrefix: string;
  timeoutMs: number;
}

// Every request waits for the limits: a short timeout, then they fail open.
export const LIMITS_REDIS: PartRedisDefaults = { keyPrefix: `${new RedisConfig().keyPrefix}limits:`, timeoutMs: 200 };
export const RESPONSES_REDIS: PartRedisDefaults = {
  keyPrefix: `${new RedisConfig().keyPrefix}responses:`,
  timeoutMs: 1_000,
};

/** The parts that may keep their state in Redis: where their section is, what they add to `redis.keyPrefix`, their defaults. */
const PARTS: ReadonlyArray<{
  path: string;
  segment: string;
  defaults: PartRedisDefaults;
  section: (config: GatewayConfig) => RedisPartSection | undefined;
}> = [
  { path: 'auth.limits', segment: 'limits:', defaults: LIMITS_REDIS, section: (config) => config.auth.limits },
  { path: 'responses', segment: 'responses:', defaults: RESPONSES_REDIS, section: (config) => config.responses },
];

/** The keys of a part that `redis:` (or the part's `redis:`) replaced, and what each became. */
const REPLACED = [
  ['redisUrl', 'url'],
  ['redisKeyPrefix', 'keyPrefix'],
  ['redisTimeoutMs', 'timeoutMs'],
] as const;

/**
 * Gives each part with `store: redis` its Redis, resolved in place (`auth.limits.redis`,
 * `responses.redis`: the part's own keys over `redis:`'s, then the part's defaults), so that every
 * reader (and `check-config`) sees what it connects with. A part's replaced keys (`redisUrl`,
 * `redisKeyPrefix`, `redisTimeoutMs`) are taken as its own keys and named in a warning each.
 * Returns the problems (a part on Redis without a URL) and the warnings.
 */
export function resolveRedisParts(config: GatewayConfig): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const { path, segment, defaults, section: sectionOf } of PARTS) {
    const section = sectionOf(config);
    if (section === undefined) continue;
    for (const [old, key] of REPLACED) {
      const value = section[old];
      if (value === undefined) continue;
      warnings.push(
        `${path}.${old} is deprecated and will be removed: set redis.${key} (the Redis of every part) or ${path}.redis.${key} (this part's own).`,
      );
      const own = (section.redis ??= new PartRedisConfig());
      if (own[key] === undefined) Object.assign(own, { [key]: value });
      delete section[old];
    }
    if (section.store !== 'redis') continue;
    const own = section.redis ?? new PartRedisConfig();
    const url = own.url ?? config.redis.url;
    if (url === undefined) {
      problems.push(
        `${path}.store is redis but no Redis is configured: set redis.url (redis://host:6379 or rediss://...), or ${path}.redis.url`,
      );
      continue;
    }
    section.redis = Object.assign(new PartRedisConfig(), {
      url,
      keyPrefix: own.keyPrefix ?? `${config.redis.keyPrefix}${segment}`,
      timeoutMs: own.timeoutMs ?? config.redis.timeoutMs ?? defaults.timeoutMs,
    });
  }
  return { problems, warnings };
}
