import { type DynamicModule, Module, type Provider, type Type } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import type { GatewayConfig } from '../config/gateway-config.js';
import { GantryLogger } from './logging/gantry-logger.js';
import { gantryLoggerModule } from './logging/logging.module.js';
import { RequestLogHook } from './logging/request-log.hook.js';
import type { GenerationHook } from './generation-hook.js';
import { GenerationHooks } from './generation-hooks.js';
import { GantryMetrics } from './metrics/gantry-metrics.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { MetricsHook } from './metrics/metrics.hook.js';
import { GantryTracer, SpanExporterOverride } from './tracing/gantry-tracer.js';
import { TracingHook } from './tracing/tracing.hook.js';
import { UnhandledStreamErrors } from './unhandled-stream-errors.js';

export interface ObservabilityOptions {
  /** Where log lines go (stdout by default); tests capture them here. */
  logDestination?: DestinationStream;
  /** A span exporter that replaces the configured one (tests use an in-memory exporter). */
  spanExporter?: SpanExporterOverride['exporter'];
}

/**
 * Request logs, metrics and tracing, each a GenerationHook (the request log outermost),
 * and `GenerationHooks`, which lists them with those of plugins for the generation routes.
 * What is switched off in the configuration is not registered at all, so it costs nothing.
 * RxJS's unhandled errors are counted and logged while the gateway runs (UnhandledStreamErrors).
 * GantryMetrics is exported for plugins that add metrics of their own.
 */
@Module({})
export class ObservabilityModule {
  static forRoot(config: GatewayConfig, options: ObservabilityOptions = {}): DynamicModule {
    const { metrics, tracing } = config.observability;
    const builtIn: Array<Type<GenerationHook>> = [RequestLogHook];
    if (metrics.enabled) builtIn.push(MetricsHook);
    const providers: Provider[] = [GantryMetrics, GantryLogger, UnhandledStreamErrors];
    if (tracing.exporter !== 'none' || options.spanExporter) {
      builtIn.push(TracingHook);
      providers.push(GantryTracer, {
        provide: SpanExporterOverride,
        useValue: options.spanExporter ? { exporter: options.spanExporter } : null,
      });
    }
    providers.push(...builtIn, {
      provide: GenerationHooks,
      useFactory: (discovery: DiscoveryService, ...builtIn: GenerationHook[]) =>
        new GenerationHooks(discovery, builtIn),
      inject: [DiscoveryService, ...builtIn],
    });
    return {
      module: ObservabilityModule,
      global: true,
      imports: [DiscoveryModule, gantryLoggerModule(config.observability.logging, options.logDestination)],
      controllers: metrics.enabled ? [MetricsController] : [],
      providers,
      exports: [GantryMetrics, GantryLogger, GenerationHooks],
    };
  }
}
