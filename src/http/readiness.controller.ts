import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ModelRegistry } from '../engines/model-registry.js';
import { LifecycleService } from '../lifecycle/lifecycle.service.js';

/**
 * Readiness: 200 when every model's engine can take requests now (for the HTTP engine, at least
 * one healthy replica), 503 otherwise, so a load balancer stops sending traffic to a gateway whose
 * fleet is down, and 503 `draining` from the moment a shutdown begins. Each model reports its
 * engine's details (the HTTP engine: its replicas).
 */
@Controller('ready')
export class ReadinessController {
  constructor(
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
  ) {}

  @Get()
  ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const models = Object.fromEntries(
      this.registry.list().map(({ config, engine }) => [
        config.name,
        { engine: config.engine, ready: engine.isReady(), ...engine.readinessDetails() },
      ]),
    );
    const ready = !this.lifecycle.isDraining && Object.values(models).every((model) => model.ready);
    void reply.status(ready ? 200 : 503);
    return { status: this.lifecycle.isDraining ? 'draining' : ready ? 'ready' : 'not_ready', models };
  }
}
