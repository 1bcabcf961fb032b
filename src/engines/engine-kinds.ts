import { Inject, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { modelsByKind, type ModelKind } from '../config/model-entries.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import { EngineKindMetadata, type EngineKindProvider } from './engine-kind.js';

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
    for (const wrapper of this.discovery.getProviders({ metadataKey: EngineKindMetadata.KEY })) {
      const kind = this.discovery.getMetadataByDecorator(EngineKindMetadata, wrapper);
      if (kind === undefined || found.get(kind.name)?.wrapper.metatype === wrapper.metatype) continue;
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
