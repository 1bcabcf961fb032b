import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import type { GatewayConfig } from '../config/gateway-config.js';
import { GantryLogger } from './logging/gantry-logger.js';
import { gantryLoggerModule } from './logging/logging.module.js';
import { RequestLogInterceptor } from './logging/request-log.interceptor.js';
import { GantryMetrics } from './metrics/gantry-metrics.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { MetricsInterceptor } from './metrics/metrics.interceptor.js';
import { GantryTracer, SpanExporterOverride } from './tracing/gantry-tracer.js';
import { TracingInterceptor } from './tracing/tracing.interceptor.js';

export interface ObservabilityOptions {
  /** Where log lines go (stdout by default); tests capture them here. */
  logDestination?: DestinationStream;
  /** A span exporter that replaces the configured one (tests use an in-memory exporter). */
  spanExporter?: SpanExporterOverride['exporter'];
}

/**
 * Metrics, tracing and request logs, each a GenerationInterceptor registered as a global
 * interceptor. What is switched off in the configuration is not registered at all, so it costs
 * nothing. GantryMetrics is exported for plugins that add metrics of their own.
 */
@Module({})
export class ObservabilityModule {
  static forRoot(config: GatewayConfig, options: ObservabilityOptions = {}): DynamicModule {
    const { metrics, tracing } = config.observability;
    const providers: Provider[] = [GantryMetrics, GantryLogger, { provide: APP_INTERCEPTOR, useClass: RequestLogInterceptor }];
    if (metrics.enabled) providers.push({ provide: APP_INTERCEPTOR, useClass: MetricsInterceptor });
    if (tracing.exporter !== 'none' || options.spanExporter) {
      providers.push(
        GantryTracer,
        { provide: SpanExporterOverride, useValue: options.spanExporter ? { exporter: options.spanExporter } : null },
        { provide: APP_INTERCEPTOR, useClass: TracingInterceptor },
      );
    }
    return {
      module: ObservabilityModule,
      global: true,
      imports: [gantryLoggerModule(config.observability.logging, options.logDestination)],
      controllers: metrics.enabled ? [MetricsController] : [],
      providers,
      exports: [GantryMetrics, GantryLogger],
    };
  }
}
