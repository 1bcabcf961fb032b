import type { Type } from '@nestjs/common';

export const GENERATION_ROUTE = 'gantry:generation-route';

export interface GenerationRouteMetadata {
  /** The route's path, e.g. `/v1/chat/completions` (always POST). */
  path: string;
  /** The request body's DTO class: the global pipes (validation) get it as the body's metatype. */
  body: Type<unknown>;
}

/**
 * Marks a handler `(body, reply) => Observable<EngineEvent>` as a generation route, served by
 * GenerationRouter below Nest's router (see there why), with Nest's guards, pipes, interceptors
 * and exception filters applied as Nest would.
 */
export function GenerationRoute(path: string, body: Type<unknown>): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(GENERATION_ROUTE, { path, body } satisfies GenerationRouteMetadata, descriptor.value as object);
    return descriptor;
  };
}
