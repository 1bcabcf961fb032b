import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { ModelConfigBase } from '../config/model-config.js';
import type { ModelKind } from '../config/model-entries.js';
import type { InferenceEngine } from '../engine/inference-engine.js';

/** What `@EngineKind` takes besides the kind's name. */
export interface EngineKindOptions {
  /**
   * The class a model entry of this kind is validated against (class-validator): it extends
   * `ModelConfigBase` with the kind's own keys, their defaults as property initializers. Without
   * one, an entry may hold only the keys every model has.
   */
  config?: new () => ModelConfigBase;
  /** The engine holds its model in the gateway's process: refused with `server.workers` above 1. */
  singleProcess?: boolean;
}

/**
 * An engine kind: the provider that makes the engine of each model entry whose `engine` names it.
 * `model` is the entry validated as the kind's config class (its own keys and their defaults
 * included). Called at start for every model of the kind, and again for each model a reload adds
 * or changes; a rejection refuses the start (or the reload) with its message.
 */
export interface EngineKindProvider<Config extends ModelConfigBase = ModelConfigBase> {
  create(model: Config): InferenceEngine | Promise<InferenceEngine>;
}

/**
 * The metadata key `@EngineKind` leaves on its class: a registered symbol, the same in every copy
 * of Gantry loaded in the process, so that a plugin that resolves a copy of its own (another
 * `node_modules`) still has its kinds found (Nest's `DiscoveryService.createDecorator` makes a new
 * random key per copy, and those kinds were silently ignored).
 */
export const ENGINE_KIND_METADATA: unique symbol = Symbol.for('gantry.engine-kind');

/**
 * Marks a class as the engine kind `name` (an `EngineKindProvider`) and makes it injectable. List
 * it among a module's providers (a plugin's included) and `engine: name` serves models with it:
 *
 * ```ts
 * @EngineKind('forward', { config: ForwardModelConfig })
 * export class ForwardEngineKind implements EngineKindProvider<ForwardModelConfig> {
 *   create(model: ForwardModelConfig) { return new ForwardEngine(model); }
 * }
 * ```
 */
export function EngineKind(name: string, options: EngineKindOptions = {}): ClassDecorator {
  return applyDecorators(
    Injectable(),
    SetMetadata<symbol, ModelKind>(ENGINE_KIND_METADATA, {
      name,
      config: options.config ?? ModelConfigBase,
      singleProcess: options.singleProcess ?? false,
    }),
  );
}

/** The kind a class was marked with by `@EngineKind`, if any. */
export function engineKindOf(type: object): ModelKind | undefined {
  return Reflect.getMetadata(ENGINE_KIND_METADATA, type) as ModelKind | undefined;
}
