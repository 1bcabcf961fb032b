import type { Type } from '@nestjs/common';
import type { NestContainer } from '@nestjs/core';
import { GuardsContextCreator, InterceptorsContextCreator, PipesContextCreator } from '@nestjs/core/internal';
import { RouterExceptionFilters } from '@nestjs/core/router/router-exception-filters.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { GENERATION_ROUTE, type GenerationRouteMetadata } from './generation-route.decorator.js';
import { type GenerationHandler, RoutePipeline } from './route-pipeline.js';

/**
 * Registers the generation routes (`@GenerationRoute` methods of the given providers) on Fastify
 * directly, each served by a RoutePipeline with the guards, pipes, interceptors and exception
 * filters that Nest resolves for it (global ones included: APP_GUARD, APP_INTERCEPTOR of plugins,
 * `useGlobalPipes`). Call it once the application is created and its global pipes are set, before
 * it listens. The other routes (models, probes, metrics, count_tokens) stay Nest controllers.
 */
export function mountGenerationRoutes(app: NestFastifyApplication, controllers: readonly Type<unknown>[]): void {
  // The container is not public on the application; its context creators are how Nest itself
  // resolves a handler's enhancers, and the only way to get the same ones.
  const container = (app as unknown as { container: NestContainer }).container;
  const config = container.applicationConfig!;
  if (config.getGlobalRequestGuards().length + config.getGlobalRequestInterceptors().length + config.getGlobalRequestPipes().length > 0) {
    throw new Error('Request-scoped global guards, interceptors or pipes are not supported on generation routes.');
  }
  const guards = new GuardsContextCreator(container, config);
  const interceptors = new InterceptorsContextCreator(container, config);
  const pipes = new PipesContextCreator(container, config);
  const filters = new RouterExceptionFilters(container, config, app.getHttpAdapter());
  const fastify = app.getHttpAdapter().getInstance();

  for (const controller of controllers) {
    const moduleKey = moduleKeyOf(container, controller);
    const instance = app.get(controller) as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = controller.prototype[name] as GenerationHandler;
      const callback = handler as (...args: unknown[]) => unknown;
      const route = typeof handler === 'function' ? (Reflect.getMetadata(GENERATION_ROUTE, handler) as GenerationRouteMetadata | undefined) : undefined;
      if (!route) continue;
      const pipeline = new RoutePipeline(controller, instance, handler, route.body, {
        guards: guards.create(instance, callback, moduleKey),
        pipes: pipes.create(instance, callback, moduleKey),
        interceptors: interceptors.create(instance, callback, moduleKey),
        exceptions: filters.create(instance, callback as never, moduleKey),
      });
      fastify.post(route.path, (request, reply) => pipeline.serve(request, reply));
    }
  }
}

function moduleKeyOf(container: NestContainer, provider: Type<unknown>): string {
  for (const [key, module] of container.getModules()) {
    if (module.providers.has(provider)) return key;
  }
  throw new Error(`${provider.name} is not a provider of any module.`);
}
