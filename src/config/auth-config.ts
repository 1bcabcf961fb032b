import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IsApiKeySource, type ApiKeySource } from './api-key-sources.js';

export const LIMIT_STORES = ['memory', 'redis'] as const;
export type LimitStoreKind = (typeof LIMIT_STORES)[number];

/**
 * Limits applied to each API key separately. `memory` counts in this process only; `redis`
 * shares the counts between every gateway replica that points at the same Redis.
 */
export class KeyLimitsConfig {
  /** Requests a key may start per minute (a window that opens at its first request). */
  @IsOptional()
  @IsInt()
  @Min(1)
  requestsPerMinute?: number;

  /** Requests (streams and non-streaming alike) a key may have in flight at once. */
  @IsOptional()
  @IsInt()
  @Min(1)
  concurrentStreams?: number;

  @IsIn(LIMIT_STORES)
  store: LimitStoreKind = 'memory';

  /** `redis://[:password@]host:port[/db]`; required with `store: redis`. */
  @ValidateIf((limits: KeyLimitsConfig) => limits.store === 'redis' || limits.redisUrl !== undefined)
  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'redisUrl must be a redis:// or rediss:// URL' })
  redisUrl?: string;

  /**
   * How long a Redis limit command may take; past it the request is let through without the
   * limit, and Redis is not asked again until it answers.
   */
  @IsInt()
  @Min(1)
  redisTimeoutMs: number = 200;

  /** Prefix of every Redis key: gateways that must not share limits use different prefixes. */
  @IsString()
  @Matches(/^\S+$/, { message: 'redisKeyPrefix must not be empty or contain spaces' })
  redisKeyPrefix: string = 'gantry:limits:';
}

/**
 * Who may call the gateway. With no `apiKeys` the gateway is open; otherwise every request
 * needs one of them, as `Authorization: Bearer <key>` or `x-api-key: <key>`.
 */
export class AuthConfig {
  @IsArray()
  @IsApiKeySource()
  apiKeys: ApiKeySource[] = [];

  /** Whether `/health` and `/ready` need a key too (probes usually cannot send one). */
  @IsBoolean()
  protectHealth: boolean = false;

  /** Whether `/metrics` needs a key. */
  @IsBoolean()
  protectMetrics: boolean = false;

  @IsOptional()
  @ValidateNested()
  @Type(() => KeyLimitsConfig)
  limits?: KeyLimitsConfig;
}
