import type { DiscoveryService } from '@nestjs/core';
import { GenerationHook } from './generation-hook.js';

/**
 * Every GenerationHook of the application, in the order they run (the first outermost): Gantry's
 * own (request log, metrics, tracing: those switched on), then those of plugins, found through
 * Nest's DiscoveryService among the providers of every module, whatever their token (a plain
 * provider, or an `APP_INTERCEPTOR`), each once.
 */
export class GenerationHooks {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly builtIn: readonly GenerationHook[],
  ) {}

  /**
   * Call once the application's providers are made (after `NestFactory.create`). A request-scoped
   * or transient one is refused: the generation routes resolve their hooks once.
   */
  list(): GenerationHook[] {
    const found = new Set<GenerationHook>(this.builtIn);
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof GenerationHook) || found.has(instance)) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        throw new Error(
          `${instance.constructor.name} is request-scoped or transient: a GenerationHook must be a singleton.`,
        );
      }
      found.add(instance);
    }
    return [...found];
  }
}
