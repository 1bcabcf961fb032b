import 'reflect-metadata';
import { Type, plainToInstance } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Min,
  MinLength,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';
import { IsApiKeySource, type ApiKeySource } from './api-key-sources.js';

/** The tenant of every key without a name (and of every request on an open gateway). */
export const DEFAULT_TENANT_NAME = 'default';

/**
 * A tenant's limits, each optional. In `auth.limits` they apply to every key without limits of
 * its own (each unnamed key counted separately); in a named key's `limits` they apply to its
 * tenant (all its keys counted together), field by field over `auth.limits`.
 */
/** The limit fields of `auth.limits` and of a named key's `limits`, each a number where set. */
export const TENANT_LIMIT_FIELDS = [
  'requestsPerMinute',
  'tokensPerMinute',
  'tokensPerDay',
  'concurrentStreams',
] as const;

export class TenantLimitsConfig {
  /** Requests started per minute (a window that opens at its first request). */
  @IsOptional()
  @IsInt()
  @Min(1)
  requestsPerMinute?: number;

  /** Prompt + completion tokens per minute, charged when the engine reports them (a window opened by the first charge). */
  @IsOptional()
  @IsInt()
  @Min(1)
  tokensPerMinute?: number;

  /** Prompt + completion tokens per day (24 hours from the window's first charge). */
  @IsOptional()
  @IsInt()
  @Min(1)
  tokensPerDay?: number;

  /** Requests (streams and non-streaming alike) in flight at once. */
  @IsOptional()
  @IsInt()
  @Min(1)
  concurrentStreams?: number;
}

/**
 * A named key (`auth.apiKeys` entry with a `name`): one tenant, with its key source (a file may
 * hold several keys of the tenant), its share of contended models, its priority, the models it
 * may use and its own limits.
 */
export class NamedApiKeyConfig {
  /** The tenant's name, as metrics, logs and spans show it (never the key). */
  @IsString()
  @Matches(/^[A-Za-z0-9][\w.-]{0,63}$/, {
    message: 'name must be 1-64 letters, digits, . _ or -, starting with a letter or digit',
  })
  name!: string;

  @IsApiKeySource({ each: false })
  key!: ApiKeySource;

  /** Its share of a contended model's service (tokens) relative to other tenants of its priority. */
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.001)
  weight: number = 1;

  /** Strict: a waiting request of a higher priority is admitted before any of a lower one. */
  @IsInt()
  priority: number = 0;

  /** Model names or globs (`*`, `?`) it may use; absent: every model. */
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @IsString({ each: true })
  @MinLength(1, { each: true })
  models?: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => TenantLimitsConfig)
  limits?: TenantLimitsConfig;
}

/** Whether an `auth.apiKeys` entry is a named key (an object with a `name`), valid or not. */
export function isNamedEntry(entry: unknown): boolean {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry) && 'name' in entry;
}

/** The `auth.apiKeys` list with its named entries made NamedApiKeyConfig (their defaults applied). */
export function toApiKeyEntries(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((entry: unknown) =>
    isNamedEntry(entry) && !(entry instanceof NamedApiKeyConfig)
      ? plainToInstance(NamedApiKeyConfig, entry, { exposeDefaultValues: true })
      : entry,
  );
}

/** Each named entry's problems, its fields named as `auth.apiKeys[i].field`. */
export function namedKeyProblems(entries: readonly unknown[]): string[] {
  return entries.flatMap((entry, index) => {
    if (!(entry instanceof NamedApiKeyConfig)) return [];
    const errors = validateSync(entry, { whitelist: true, forbidNonWhitelisted: true });
    return flattenValidationErrors(errors, `auth.apiKeys[${index}]`).map((problem) => problem.message);
  });
}
