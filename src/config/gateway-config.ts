import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { AuthConfig } from './auth-config.js';
import { ObservabilityConfig } from './observability-config.js';
import { RedisConfig } from './redis-config.js';
import { ResponsesConfig } from './responses-config.js';
import { LimitsConfig, ServerConfig, ShutdownConfig } from './server-config.js';
import type { ModelConfig } from './model-config.js';
import { defaultModels } from './model-entries.js';

export const KEEPALIVE_MODES = ['chunks', 'comments', 'off'] as const;
export type KeepaliveMode = (typeof KEEPALIVE_MODES)[number];

export class KeepaliveConfig {
  /** `chunks`: protocol heartbeats until the first output; `comments`: `: keep-alive` for the whole stream. */
  @IsIn(KEEPALIVE_MODES)
  mode: KeepaliveMode = 'chunks';

  @IsInt()
  @Min(10)
  intervalMs: number = 15_000;
}

/** The whole configuration; a YAML file maps onto it key for key. */
export class GatewayConfig {
  @ValidateNested()
  @Type(() => ServerConfig)
  server: ServerConfig = new ServerConfig();

  @ValidateNested()
  @Type(() => KeepaliveConfig)
  keepalive: KeepaliveConfig = new KeepaliveConfig();

  @ValidateNested()
  @Type(() => AuthConfig)
  auth: AuthConfig = new AuthConfig();

  @ValidateNested()
  @Type(() => ObservabilityConfig)
  observability: ObservabilityConfig = new ObservabilityConfig();

  @ValidateNested()
  @Type(() => ResponsesConfig)
  responses: ResponsesConfig = new ResponsesConfig();

  /** The Redis of every part with `store: redis` (limits, stored responses), unless the part sets its own. */
  @ValidateNested()
  @Type(() => RedisConfig)
  redis: RedisConfig = new RedisConfig();

  /** Nest modules loaded at start (paths to ES modules whose default export is the module class). */
  @IsArray()
  @IsString({ each: true })
  plugins: string[] = [];

  @ValidateNested()
  @Type(() => LimitsConfig)
  limits: LimitsConfig = new LimitsConfig();

  @ValidateNested()
  @Type(() => ShutdownConfig)
  shutdown: ShutdownConfig = new ShutdownConfig();

  /** Each entry's keys beyond those every model has are checked by its engine kind (model-entries.ts). */
  @IsArray()
  models: ModelConfig[] = defaultModels();
}
