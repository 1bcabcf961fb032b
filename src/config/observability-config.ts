import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsString, IsUrl, ValidateNested } from 'class-validator';

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
