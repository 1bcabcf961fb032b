import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsIn, IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { AuthConfig } from './auth-config.js';
import { ObservabilityConfig } from './observability-config.js';
import { ResponsesConfig } from './responses-config.js';
import { LimitsConfig, ServerConfig, ShutdownConfig } from './server-config.js';
import { HttpModelConfig, LlamaModelConfig, ModelConfigBase, StubModelConfig, type ModelConfig } from './model-config.js';

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

  @IsArray()
  @ArrayUnique((model: ModelConfig) => model.name, { message: 'models must have unique names' })
  @ValidateNested({ each: true })
  @Type(() => ModelConfigBase, {
    keepDiscriminatorProperty: true,
    discriminator: {
      property: 'engine',
      subTypes: [
        { value: StubModelConfig, name: 'stub' },
        { value: HttpModelConfig, name: 'http' },
        { value: LlamaModelConfig, name: 'llama' },
      ],
    },
  })
  models: ModelConfig[] = [defaultStubModel()];
}

function defaultStubModel(): StubModelConfig {
  return Object.assign(new StubModelConfig(), { name: 'stub', engine: 'stub' as const });
}
