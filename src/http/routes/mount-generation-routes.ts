import { Logger } from '@nestjs/common';
import { ApplicationConfig, DiscoveryService } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiKeyGuard } from '../../auth/api-key.guard.js';
import { GatewayConfig } from '../../config/gateway-config.js';
import { DrainingGuard } from '../../lifecycle/draining.guard.js';
import { GenerationHook } from '../../observability/generation-hook.js';
import { GenerationHooks } from '../../observability/generation-hooks.js';
import { HookFailures } from '../../observability/hook-failures.js';
import { GantryMetrics } from '../../observability/metrics/gantry-metrics.js';
import { ProtocolExceptionFilter } from '../errors/protocol-exception.filter.js';
import { generationHandler, type GenerationPlugins } from './generation-pipeline.js';
import { GenerationRoutes } from './generation-routes.js';
import { PoolingRoutes } from './pooling-routes.js';
import { globalEnhancers } from './global-enhancers.js';
import { generationRouteTargets } from './generation-route-metadata.js';
import { NestGuardCheck } from './nest-guard-check.js';

/** Gantry's guards of the generation routes, in the order they run: a draining gateway refuses before keys are checked. */
const GENERATION_GUARDS = [DrainingGuard, ApiKeyGuard] as const;

/**
 * Registers the generation routes on Fastify as plain routes, each behind the generation
 * pipeline (generation-pipeline.ts): Gantry's guards, then every other `APP_GUARD` (plugins'), the
 * hooks of every GenerationHook (Gantry's and plugins'), the body's validation, and
 * ProtocolExceptionFilter for refusals, each resolved once, here. Nest's other global enhancers
 * (`APP_PIPE`, `APP_FILTER`, `APP_INTERCEPTOR`) reach Nest's own
 * routes only: each is named in a warning (unless `warnOfUnreachableEnhancers` is false: another
 * worker of the instance says it). Call it once the application is created, before it listens.
 */
export function mountGenerationRoutes(app: NestFastifyApplication, { warnOfUnreachableEnhancers = true } = {}): void {
  const gantryGuards = GENERATION_GUARDS.map((guard) => app.get(guard));
  const errors = app.get(ProtocolExceptionFilter);
  const discovery = app.get(DiscoveryService);
  const enhancers = globalEnhancers(discovery, app.get(ApplicationConfig), [...gantryGuards, errors]);
  const targets = generationRouteTargets(discovery);
  const hooks = GenerationHook.chain(app.get(GenerationHooks).list(), new HookFailures(app.get(GantryMetrics)).report);
  const fastify = app.getHttpAdapter().getInstance();
  const routes = [...app.get(GenerationRoutes).routes, ...app.get(PoolingRoutes).routes];
  for (const route of routes) {
    const plugins: GenerationPlugins = {
      guards: [
        ...gantryGuards,
        ...enhancers.guards.map(
          (guard) => new NestGuardCheck(guard, targets.routeClass, targets.handlerOf(route.protocol.api)),
        ),
      ],
      hooks,
      errors,
      guardTimeoutMs: app.get(GatewayConfig).server.guardTimeoutMs,
    };
    fastify.post(route.protocol.path, generationHandler(route, plugins));
  }
  if (warnOfUnreachableEnhancers && enhancers.unreachable.length > 0) {
    new Logger('Gantry').warn(
      `These Nest enhancers reach Nest's own routes only, not the generation routes (${routes.map((route) => route.protocol.path).join(', ')}): ` +
        `${enhancers.unreachable.join(', ')}. Generation requests run APP_GUARD guards and GenerationHook providers (docs/extending.md, What Nest applies to the generation routes).`,
    );
  }
}
