import { IsInt, IsOptional, IsString, Matches, Min } from 'class-validator';
import { IsServiceUrl } from './service-url.validator.js';

const URL_MESSAGE = 'url must be a redis:// or rediss:// URL (redis://[:password@]host:port[/db])';
/** What a Redis URL may start with. */
export const REDIS_PROTOCOLS = ['redis', 'rediss'] as const;
const PREFIX_MESSAGE = 'keyPrefix must not be empty or contain spaces';

/**
 * `redis:`, the Redis of every part that keeps its state there (`auth.limits.store: redis`: per-key
 * limits and tenants' token budgets; `responses.store: redis`: stored responses), unless the part
 * sets its own (`auth.limits.redis`, `responses.redis`).
 */
export class RedisConfig {
  /** `redis://[:password@]host:port[/db]` (or `rediss://`); needed once a part has `store: redis`. */
  @IsOptional()
  @IsString()
  @IsServiceUrl(REDIS_PROTOCOLS, { message: URL_MESSAGE })
  url?: string;

  /** Starts every key and channel; each part adds its own (`limits:`, `responses:`). Gateways that must not share state use different ones. */
  @IsString()
  @Matches(/^\S+$/, { message: PREFIX_MESSAGE })
  keyPrefix: string = 'gantry:';

  /**
   * How long a command may take. Unset: each part's own default (per-key limits 200 ms, since
   * every request waits for them; stored responses 1000 ms).
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  timeoutMs?: number;
}

/**
 * A part's own Redis (`auth.limits.redis`, `responses.redis`): each key set here wins over
 * `redis:`'s. Its `keyPrefix` is the part's whole prefix (no part segment is added). Once the
 * configuration is read, a part with `store: redis` holds all three, resolved (what it connects with).
 */
export class PartRedisConfig {
  @IsOptional()
  @IsString()
  @IsServiceUrl(REDIS_PROTOCOLS, { message: URL_MESSAGE })
  url?: string;

  @IsOptional()
  @IsString()
  @Matches(/^\S+$/, { message: PREFIX_MESSAGE })
  keyPrefix?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  timeoutMs?: number;
}
