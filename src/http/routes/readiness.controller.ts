import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GatewayConfig } from '../../config/gateway-config.js';
import { hasReadinessDetails } from '../../engine/readiness-details.js';
import { ModelRegistry } from '../../models/model-registry.js';
import { LifecycleService } from '../../lifecycle/lifecycle.service.js';

/**
 * Readiness, for a load balancer: 200 while the instance is worth sending traffic to, 503
 * otherwise, and 503 `draining` from the moment a shutdown begins. With `server.readinessRequires:
 * any` (the default) one model that can serve (for the HTTP engine, one healthy replica) is
 * enough: a single dead fleet would otherwise take every healthy model of the instance out of
 * rotation too. With `all`, every model must. The body always reports each model's readiness and
 * its engine's details (the HTTP engine: its replicas).
 */
@Controller('ready')
export class ReadinessController {
  private readonly requireAll: boolean;

  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.requireAll = config.server.readinessRequires === 'all';
  }

  @Get()
  ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const models = Object.fromEntries(
      this.registry.list().map(({ config, engine }) => [
        config.name,
        {
          engine: config.engine,
          ready: engine.isReady(),
          ...(hasReadinessDetails(engine) ? engine.readinessDetails() : {}),
        },
      ]),
    );
    const states = Object.values(models);
    const serving = this.requireAll ? states.every((model) => model.ready) : states.some((model) => model.ready);
    const ready = !this.lifecycle.isDraining && serving;
    void reply.status(ready ? 200 : 503);
    return { status: this.lifecycle.isDraining ? 'draining' : ready ? 'ready' : 'not_ready', models };
  }
}
