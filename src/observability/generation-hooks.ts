import type { DiscoveryService } from '@nestjs/core';
import { isGenerationHook, isUnmarkedGenerationHook, type GenerationHook } from './generation-hook.js';

/**
 * Every GenerationHook of the application, in the order they run (the first outermost): Gantry's
 * own (request log, metrics, tracing: those switched on), then those of plugins, found through
 * Nest's DiscoveryService among the providers of every module, whatever their token, each once,
 * by their mark (`isGenerationHook`): a plugin's hook counts whichever copy of Gantry it extends.
 * One registered as an `APP_INTERCEPTOR` refuses the start (Nest's check: it has no `intercept`).
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
      if (isUnmarkedGenerationHook(instance)) {
        throw new Error(
          `The plugin module ${wrapper.host?.name ?? 'unknown'} provides ${wrapper.name}, a GenerationHook of another copy of Gantry ` +
            "than the gateway's, which does not recognise it: have the plugin import the gateway's own `gantry` (docs/extending.md, Where a plugin finds gantry).",
        );
      }
      if (!isGenerationHook(instance) || found.has(instance)) continue;
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
