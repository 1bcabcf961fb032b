import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { AuthConfig } from './auth-config.js';
import { HttpModelConfig, LlamaModelConfig, ModelConfigBase, StubModelConfig, type ModelConfig } from './model-config.js';

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

  /** Frames a stream may hold for a client that does not read; past it the client is dropped. */
  @IsInt()
  @Min(4096)
  maxBufferedBytesPerStream: number = 4 * 1024 * 1024;

  /** How long an idle keep-alive connection stays open; above common load balancers' 60 s. */
  @IsInt()
  @Min(0)
  keepAliveTimeoutMs: number = 65_000;

  /** Time allowed to receive a request's headers. */
  @IsInt()
  @Min(1)
  headersTimeoutMs: number = 60_000;

  /** Time allowed for a whole request and its response; 0 (the default) never cuts a long stream. */
  @IsInt()
  @Min(0)
  requestTimeoutMs: number = 0;
}

/** Limits on what a request may ask for, checked before its stream opens. */
export class LimitsConfig {
  /** Messages a conversation may hold (system and tool messages included); unlimited by default. */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxMessages?: number;

  /**
   * Nesting depth of a JSON body (objects and arrays); deeper bodies get 400 before validation.
   * At most 256: validation recurses, and about 1,000 levels exhaust its stack (a 500).
   */
  @IsInt()
  @Min(8)
  @Max(256)
  maxJsonDepth: number = 64;
}

export class ShutdownConfig {
  /** On SIGTERM, how long open streams may run on before they end with the protocol's error. */
  @IsInt()
  @Min(0)
  drainMs: number = 10_000;
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

export const TRACE_EXPORTERS = ['none', 'console', 'otlp'] as const;

export class MetricsConfig {
  /** Serve Prometheus metrics on `GET /metrics`. */
  @IsBoolean()
  enabled: boolean = true;
}

export class TracingConfig {
  /** `none` registers nothing (no cost); `console` prints spans; `otlp` sends them over HTTP. */
  @IsIn(TRACE_EXPORTERS)
  exporter: (typeof TRACE_EXPORTERS)[number] = 'none';

  /** OTLP/HTTP traces endpoint. */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  otlpEndpoint: string = 'http://127.0.0.1:4318/v1/traces';

  @IsString()
  serviceName: string = 'gantry';
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export class LoggingConfig {
  @IsIn(LOG_LEVELS)
  level: (typeof LOG_LEVELS)[number] = 'info';

  /** Debug only: put request bodies and output text in the request log line. Off by default. */
  @IsBoolean()
  includeContent: boolean = false;
}

export class ObservabilityConfig {
  @ValidateNested()
  @Type(() => MetricsConfig)
  metrics: MetricsConfig = new MetricsConfig();

  @ValidateNested()
  @Type(() => TracingConfig)
  tracing: TracingConfig = new TracingConfig();

  @ValidateNested()
  @Type(() => LoggingConfig)
  logging: LoggingConfig = new LoggingConfig();
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
