import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiKeyGuard } from '../../auth/api-key.guard.js';
import { DrainingGuard } from '../../lifecycle/draining.guard.js';
import { GenerationInterceptor } from '../../observability/generation-interceptor.js';
import { GenerationInterceptors } from '../../observability/generation-interceptors.js';
import { ProtocolExceptionFilter } from '../errors/protocol-exception.filter.js';
import { generationHandler, type GenerationPlugins } from './generation-pipeline.js';
import { GenerationRoutes } from './generation-routes.js';

/** The guards of the generation routes, in the order they run: a draining gateway refuses before keys are checked. */
const GENERATION_GUARDS = [DrainingGuard, ApiKeyGuard] as const;

/**
 * Registers the generation routes on Fastify as plain routes, each behind the generation
 * pipeline (generation-pipeline.ts): Gantry's guards, the hooks of every GenerationInterceptor
 * (Gantry's and plugins'), the body's validation, and ProtocolExceptionFilter for refusals,
 * each taken by its class and resolved once, here. Nest's enhancers are not applied to them:
 * `APP_GUARD`, `APP_PIPE`, `APP_FILTER` and `APP_INTERCEPTOR` providers, and `useGlobal*()`,
 * reach Nest's own routes only. Call it once the application is created, before it listens.
 */
export function mountGenerationRoutes(app: NestFastifyApplication): void {
  const plugins: GenerationPlugins = {
    guards: GENERATION_GUARDS.map((guard) => app.get(guard)),
    hooks: GenerationInterceptor.chain(app.get(GenerationInterceptors).list()),
    errors: app.get(ProtocolExceptionFilter),
  };
  const fastify = app.getHttpAdapter().getInstance();
  for (const route of app.get(GenerationRoutes).routes) fastify.post(route.protocol.path, generationHandler(route, plugins));
}
