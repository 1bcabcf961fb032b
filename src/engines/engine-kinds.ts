import { Inject, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { modelsByKind, type ModelKind } from '../config/model-entries.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import { ENGINE_KIND_METADATA, engineKindOf, type EngineKindProvider } from './engine-kind.js';

type ProviderWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * Every engine kind of the application, found through Nest's DiscoveryService among the providers
 * of every module: the built-in ones (stub, http, llama) and plugins' alike. It validates model
 * entries by their kind and makes their engines.
 */
@Injectable()
export class EngineKinds {
  private found?: Map<string, { kind: ModelKind; wrapper: ProviderWrapper }>;

  constructor(@Inject(DiscoveryService) private readonly discovery: DiscoveryService) {}

  /** The kinds, in the order their modules were imported (the built-in ones first). */
  list(): ModelKind[] {
    return [...this.byName().values()].map(({ kind }) => kind);
  }

  /** The configuration's model entries validated by their kinds (throws ConfigError naming `origin`). */
  parseModels(config: GatewayConfig, origin: string): ModelConfig[] {
    return modelsByKind(config.models, this.list(), { origin, server: config.server });
  }

  /** The engine of a model entry that `parseModels` returned. */
  async create(model: ModelConfig): Promise<InferenceEngine> {
    const found = this.byName().get(model.engine);
    if (found === undefined) throw new Error(`There is no engine kind '${model.engine}'.`);
    const provider = found.wrapper.instance as Partial<EngineKindProvider> | undefined;
    if (typeof provider?.create !== 'function') {
      throw new Error(`The engine kind '${model.engine}' (${found.wrapper.name}) has no create(model) method.`);
    }
    return provider.create(model);
  }

  private byName(): Map<string, { kind: ModelKind; wrapper: ProviderWrapper }> {
    if (this.found) return this.found;
    const found = new Map<string, { kind: ModelKind; wrapper: ProviderWrapper }>();
    for (const wrapper of this.discovery.getProviders()) {
      const type = classOf(wrapper);
      if (type === undefined) continue;
      const kind = engineKindOf(type);
      if (kind === undefined) {
        refuseUnrecognisedKind(type, wrapper);
        continue;
      }
      if (found.get(kind.name)?.wrapper.metatype === wrapper.metatype) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        throw new Error(
          `The engine kind '${kind.name}' (${wrapper.name}) is request-scoped or transient: an engine kind must be a singleton.`,
        );
      }
      const other = found.get(kind.name);
      if (other)
        throw new Error(`Two providers are the engine kind '${kind.name}': ${other.wrapper.name} and ${wrapper.name}.`);
      found.set(kind.name, { kind, wrapper });
    }
    this.found = found;
    return found;
  }
}

/** The class a provider was made from (`useClass`, or the class of a `useValue`/`useFactory` instance). */
function classOf(wrapper: ProviderWrapper): object | undefined {
  const metatype: unknown = wrapper.metatype;
  if (typeof metatype === 'function' && engineKindOf(metatype) !== undefined) return metatype;
  const instance: unknown = wrapper.instance;
  if (typeof instance === 'object' && instance !== null) return instance.constructor;
  return typeof metatype === 'function' ? metatype : undefined;
}

/**
 * A class marked as an engine kind by a Gantry that left its mark under another key (an older copy
 * a plugin resolved on its own: Nest's random per-copy keys) would be silently ignored, and its
 * models refused as of an unknown kind: the start is refused instead, naming the plugin.
 */
function refuseUnrecognisedKind(type: object, wrapper: ProviderWrapper): void {
  for (const key of Reflect.getMetadataKeys(type) as unknown[]) {
    if (key === ENGINE_KIND_METADATA) continue;
    const value: unknown = Reflect.getMetadata(key, type);
    if (!looksLikeKind(value)) continue;
    throw new Error(
      `The plugin module ${wrapper.host?.name ?? 'unknown'} provides ${wrapper.name}, marked as the engine kind '${value.name}' ` +
        "by another copy of Gantry than the gateway's, which does not recognise it: have the plugin import the gateway's own `gantry` (docs/extending.md, Where a plugin finds gantry).",
    );
  }
}

function looksLikeKind(value: unknown): value is { name: string } {
  const kind = value as Partial<ModelKind> | null;
  return (
    typeof kind === 'object' &&
    kind !== null &&
    typeof kind.name === 'string' &&
    typeof kind.config === 'function' &&
    typeof kind.singleProcess === 'boolean'
  );
}
