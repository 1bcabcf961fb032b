import { Controller, Get, Header, Inject } from '@nestjs/common';
import { GantryMetrics } from './gantry-metrics.js';

/** `GET /metrics` in Prometheus text format. */
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(GantryMetrics) private readonly metrics: GantryMetrics) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
