import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { LlamaModelConfig, ModelConfigBase, StubModelConfig, type ModelConfig } from './model-config.js';

export class ServerConfig {
  @IsString()
  host: string = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  port: number = 8000;

  /** Largest request body accepted; larger ones get 413. */
  @IsInt()
  @Min(1024)
  bodyLimitBytes: number = 8 * 1024 * 1024;
}

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

export class AuthConfig {
  @IsArray()
  @IsString({ each: true })
  apiKeys: string[] = [];
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

  @IsArray()
  @ArrayUnique((model: ModelConfig) => model.name, { message: 'models must have unique names' })
  @ValidateNested({ each: true })
  @Type(() => ModelConfigBase, {
    keepDiscriminatorProperty: true,
    discriminator: {
      property: 'engine',
      subTypes: [
        { value: StubModelConfig, name: 'stub' },
        { value: LlamaModelConfig, name: 'llama' },
      ],
    },
  })
  models: ModelConfig[] = [defaultStubModel()];
}

function defaultStubModel(): StubModelConfig {
  return Object.assign(new StubModelConfig(), { name: 'stub', engine: 'stub' as const });
}
