import { applyDecorators, Injectable, SetMetadata, type Type } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import { MODEL_APIS, type ModelApi } from '../../config/model-apis.js';

/**
 * The metadata key `@GenerationRouteMetadata` leaves on its class: a registered symbol, the same
 * in every copy of Gantry loaded in the process (as `@EngineKind`'s), so that a plugin that
 * resolves a copy of its own still has its metadata found.
 */
export const GENERATION_ROUTE_METADATA: unique symbol = Symbol.for('gantry.generation-route-metadata');

/**
 * Marks a class whose decorators' metadata the generation routes carry, for guards that read it
 * with Nest's `Reflector` (docs/extending.md#guards): the class's own metadata is the routes'
 * class's (`context.getClass()`), and a method named after an API (`chat`, `responses`,
 * `messages`, `completions`, `embeddings`, `rerank`, `score`) gives its metadata to that API's
 * route handler (`context.getHandler()`). List the class among a module's providers:
 *
 * ```ts
 * @GenerationRouteMetadata()
 * @Roles('member')
 * export class RouteMetadata {
 *   @Public() embeddings() {}
 * }
 * ```
 */
export function GenerationRouteMetadata(): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(GENERATION_ROUTE_METADATA, true));
}

/** What a guard of the generation routes reads as the route's class and handler. */
export interface GenerationRouteTargets {
  /** One class for every generation route, carrying the class metadata of every marked class. */
  readonly routeClass: Type;
  /** Each API's handler, carrying the metadata of the marked classes' methods named after it. */
  handlerOf(api: ModelApi): (...args: never[]) => unknown;
}

/**
 * The route class and handlers of one gateway's generation routes, with the metadata of every
 * `@GenerationRouteMetadata` class among the application's providers (found through Nest's
 * DiscoveryService), copied in the order Nest lists them: a key set by a later one replaces an
 * earlier one's. Made per gateway, so that two gateways in one process keep theirs apart. A
 * marked class with a method named after no API refuses the start, naming both.
 */
export function generationRouteTargets(discovery: DiscoveryService): GenerationRouteTargets {
  const routeClass = class GenerationRoutes {};
  const handlers = new Map<ModelApi, (...args: never[]) => unknown>(
    // Named after its API, as a controller's method is named after its route.
    MODEL_APIS.map((api) => [api, { [api]: () => undefined }[api]]),
  );
  for (const wrapper of discovery.getProviders()) {
    const marked: unknown = wrapper.metatype;
    if (typeof marked !== 'function' || Reflect.getMetadata(GENERATION_ROUTE_METADATA, marked) !== true) continue;
    copyMetadata(marked, routeClass);
    for (const [name, method] of methodsOf(marked as Type)) {
      const handler = handlers.get(name as ModelApi);
      if (!handler) {
        throw new Error(
          `${marked.name} (@GenerationRouteMetadata) has a method ${name}, named after no generation route: name each after its API (${MODEL_APIS.join(', ')}).`,
        );
      }
      copyMetadata(method, handler);
    }
  }
  return { routeClass, handlerOf: (api) => handlers.get(api)! };
}

/** Every metadata key of `from` (its class's parents' included, as `Reflector` reads them) onto `to`, but the mark. */
function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getMetadataKeys(from) as unknown[]) {
    if (key !== GENERATION_ROUTE_METADATA) Reflect.defineMetadata(key, Reflect.getMetadata(key, from), to);
  }
}

/** The methods of a class and its parents' (a subclass's first), but the constructor, by name. */
function methodsOf(type: Type): Map<string, object> {
  const methods = new Map<string, object>();
  for (let proto: object | null = type.prototype as object; proto && proto !== Object.prototype;) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value: unknown = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (name !== 'constructor' && typeof value === 'function' && !methods.has(name)) methods.set(name, value);
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return methods;
}
