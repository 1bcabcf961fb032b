import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { GatewayConfig } from '../../config/gateway-config.js';

/** An exporter supplied in code (tests use an in-memory one); it wins over the configured one. */
export abstract class SpanExporterOverride {
  abstract readonly exporter: SpanExporter;
}

/**
 * The tracer of this gateway: an OpenTelemetry provider of its own (not the global one), built
 * from `observability.tracing`. With exporter `none` (the default) no provider exists and the
 * tracing hook is not even registered.
 */
@Injectable()
export class GantryTracer implements OnApplicationShutdown {
  readonly tracer: Tracer;
  readonly propagator = new W3CTraceContextPropagator();
  private readonly provider?: BasicTracerProvider;

  constructor(
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(SpanExporterOverride) override: SpanExporterOverride | null,
  ) {
    const processor = spanProcessor(config, override?.exporter);
    if (processor === undefined) {
      this.tracer = trace.getTracer('gantry');
      return;
    }
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.observability.tracing.serviceName }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('gantry');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

function spanProcessor(config: GatewayConfig, override: SpanExporter | undefined): SpanProcessor | undefined {
  if (override) return new SimpleSpanProcessor(override);
  const tracing = config.observability.tracing;
  switch (tracing.exporter) {
    case 'none':
      return undefined;
    case 'console':
      return new SimpleSpanProcessor(new ConsoleSpanExporter());
    case 'otlp':
      return new BatchSpanProcessor(new OTLPTraceExporter({ url: tracing.otlpEndpoint }));
  }
}
