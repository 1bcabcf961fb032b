import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Min, MinLength, ValidateNested } from 'class-validator';
import { IsServiceUrl } from './service-url.validator.js';
import { PartRedisConfig, REDIS_PROTOCOLS } from './redis-config.js';

export const RESPONSE_STORES = ['memory', 'redis', 'off'] as const;
export type ResponseStoreKind = (typeof RESPONSE_STORES)[number];

const MIB = 1024 * 1024;

/** The OpenAI Responses API (`responses:` in the YAML). */
export class ResponsesConfig {
  /**
   * The secret that seals reasoning into `encrypted_content` (AES-256-GCM; the key is the
   * SHA-256 of this string). Every replica behind one load balancer needs the same one. Absent:
   * a random key is made at each start, so blobs sealed before a restart are refused after it.
   */
  @IsOptional()
  @IsString()
  @MinLength(32, {
    message:
      'responses.encryptionKey must be at least 32 characters (for example the output of `openssl rand -base64 32`)',
  })
  encryptionKey?: string;

  /**
   * Where stored responses (`store: true`, `background`, `previous_response_id`) are kept:
   * `memory` in this process (bounded below), `redis` shared by every replica, `off` nowhere
   * (the stateful features are refused).
   */
  @IsIn(RESPONSE_STORES)
  store: ResponseStoreKind = 'memory';

  /**
   * This part's own Redis, over `redis:` (see PartRedisConfig); resolved once read when `store` is
   * redis. When Redis fails, the requests that need the store fail (503).
   */
  @IsOptional()
  @ValidateNested()
  @Type(() => PartRedisConfig)
  redis?: PartRedisConfig;

  /** Deprecated: `redis.url` or `responses.redis.url`. Taken as the latter, with a warning. */
  @IsOptional()
  @IsServiceUrl(REDIS_PROTOCOLS, { message: 'redisUrl must be a redis:// or rediss:// URL' })
  redisUrl?: string;

  /** A stored response, its items and its events are forgotten this long after their last write. */
  @IsInt()
  @Min(1)
  ttlSeconds: number = 86_400;

  /** The memory store keeps at most this many responses; past it the least recently written go. */
  @IsInt()
  @Min(1)
  maxStoredResponses: number = 10_000;

  /** Events kept per background response (both stores); past it the oldest are dropped. */
  @IsInt()
  @Min(16)
  maxEventsPerResponse: number = 100_000;

  /** The memory store's bound on JSON bytes (responses, items, events); past it the least recently written go. */
  @IsInt()
  @Min(MIB, { message: `maxStoredBytes must be at least ${MIB} (1 MiB)` })
  maxStoredBytes: number = 256 * MIB;

  /**
   * The most JSON bytes a request's input may hold once the stored parts it names are put in (its
   * `previous_response_id` chain, its `item_reference`s, each time one is named); past it, a 400.
   */
  @IsInt()
  @Min(1024, { message: 'maxResolvedInputBytes must be at least 1024' })
  maxResolvedInputBytes: number = 16 * MIB;

  /** Deprecated: `redis.timeoutMs` or `responses.redis.timeoutMs`. */
  @IsOptional()
  @IsInt()
  @Min(10)
  redisTimeoutMs?: number;

  /** Deprecated: `responses.redis.keyPrefix` (this part's whole prefix), or `redis.keyPrefix`. */
  @IsOptional()
  @IsString()
  @Matches(/^\S+$/, { message: 'redisKeyPrefix must not be empty or contain spaces' })
  redisKeyPrefix?: string;
}
