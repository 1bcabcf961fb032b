import type { CanActivate } from '@nestjs/common';
import type { ApplicationConfig, DiscoveryService } from '@nestjs/core';

/** What the application's `APP_GUARD`, `APP_PIPE`, `APP_FILTER` and `APP_INTERCEPTOR` providers mean for the generation routes. */
export interface GlobalEnhancers {
  /** `APP_GUARD`s other than Gantry's own: they run after Gantry's, in the order their modules were imported. */
  guards: CanActivate[];
  /** Those that do not reach the generation routes, named (`APP_PIPE RedactPipe`). */
  unreachable: string[];
}

const TOKEN_OF_SUBTYPE: Record<string, string> = {
  pipe: 'APP_PIPE',
  filter: 'APP_FILTER',
  interceptor: 'APP_INTERCEPTOR',
};

/**
 * Sorts the application's global enhancers, found through Nest's DiscoveryService (each such
 * provider's wrapper says which kind it is): guards join the generation routes; pipes, filters
 * and interceptors cannot (those routes are not Nest's) and are named. `own` are Gantry's, which
 * the routes already run (its guards, its exception filter). A request-scoped or transient
 * APP_GUARD is refused. (A GenerationHook registered as an APP_INTERCEPTOR never gets here: Nest
 * refuses the start, the hook having no `intercept`.)
 */
export function globalEnhancers(
  discovery: DiscoveryService,
  application: ApplicationConfig,
  own: readonly object[],
): GlobalEnhancers {
  // Nest keeps request-scoped and transient APP_GUARDs apart, made per request for its own routes:
  // the generation routes resolve theirs once, so such a guard would never run on them.
  const scoped = application.getGlobalRequestGuards().map((wrapper) => wrapper.metatype?.name ?? String(wrapper.token));
  if (scoped.length > 0) {
    throw new Error(
      `APP_GUARD ${scoped.join(', ')} is request-scoped or transient: the generation routes resolve their guards once, so a guard must be a singleton.`,
    );
  }
  const guards: CanActivate[] = [];
  const unreachable: string[] = [];
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (wrapper.subtype === undefined || typeof instance !== 'object' || instance === null || own.includes(instance))
      continue;
    if (wrapper.subtype === 'guard') guards.push(instance as CanActivate);
    else unreachable.push(`${TOKEN_OF_SUBTYPE[wrapper.subtype] ?? wrapper.subtype} ${instance.constructor.name}`);
  }
  return { guards, unreachable };
}
