import { Controller, Get, Header, Inject, Optional } from '@nestjs/common';
import { GantryMetrics } from './gantry-metrics.js';
import { MetricsExposition } from './metrics-exposition.js';

/** `GET /metrics` in Prometheus text format: this process's series, or the instance's with several workers. */
@Controller('metrics')
export class MetricsController {
  constructor(
    @Inject(GantryMetrics) private readonly metrics: GantryMetrics,
    @Optional() @Inject(MetricsExposition) private readonly exposition?: MetricsExposition,
  ) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.exposition?.expose() ?? this.metrics.registry.metrics();
  }
}
