import { Transform, Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsServiceUrl } from './service-url.validator.js';
import type { ApiKeyEntry } from './api-key-entries.js';
import { isApiKeySource } from './api-key-sources.js';
import { PartRedisConfig, REDIS_PROTOCOLS } from './redis-config.js';
import { isNamedEntry, TenantLimitsConfig, toApiKeyEntries } from './tenant-config.js';

export const LIMIT_STORES = ['memory', 'redis'] as const;
export type LimitStoreKind = (typeof LIMIT_STORES)[number];

/**
 * Limits applied to each key without a name separately, and the defaults of named keys (see
 * TenantLimitsConfig), and where they are counted: `memory` in this process (with workers, the
 * primary's), `redis` shared by every gateway replica that points at the same Redis (`redis:`, or
 * this part's own `redis`). When Redis fails, requests are let through without the limits.
 */
export class KeyLimitsConfig extends TenantLimitsConfig {
  @IsIn(LIMIT_STORES)
  store: LimitStoreKind = 'memory';

  /** This part's own Redis, over `redis:` (see PartRedisConfig); resolved once read when `store` is redis. */
  @IsOptional()
  @ValidateNested()
  @Type(() => PartRedisConfig)
  redis?: PartRedisConfig;

  /** Deprecated: `redis.url` or `auth.limits.redis.url`. Taken as the latter, with a warning. */
  @IsOptional()
  @IsString()
  @IsServiceUrl(REDIS_PROTOCOLS, { message: 'redisUrl must be a redis:// or rediss:// URL' })
  redisUrl?: string;

  /** Deprecated: `redis.timeoutMs` or `auth.limits.redis.timeoutMs`. */
  @IsOptional()
  @IsInt()
  @Min(1)
  redisTimeoutMs?: number;

  /** Deprecated: `auth.limits.redis.keyPrefix` (this part's whole prefix), or `redis.keyPrefix`. */
  @IsOptional()
  @IsString()
  @Matches(/^\S+$/, { message: 'redisKeyPrefix must not be empty or contain spaces' })
  redisKeyPrefix?: string;
}

/** Validates each `auth.apiKeys` entry: a key source, or a named key (whose fields are checked on their own, tenant-config.ts). */
function IsApiKeyEntry(): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isApiKeyEntry',
      validator: {
        validate: (value) => isApiKeySource(value) || isNamedEntry(value),
        defaultMessage: (args) =>
          `${args?.property} entries must each be a key (a non-empty string), { env: NAME }, { file: PATH } or a named key { name, key, ... }`,
      },
    },
    { each: true },
  );
}

/**
 * Who may call the gateway. With no `apiKeys` the gateway is open; otherwise every request
 * needs one of them, as `Authorization: Bearer <key>` or `x-api-key: <key>`. Keys without a name
 * share the tenant `default`; a named key is a tenant of its own.
 */
export class AuthConfig {
  @IsArray()
  @IsApiKeyEntry()
  @Transform(({ value }) => toApiKeyEntries(value), { toClassOnly: true })
  apiKeys: ApiKeyEntry[] = [];

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
