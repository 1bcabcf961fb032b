import type { ModelConfig } from '../config/model-config.js';
import { AdmissionQueue } from '../admission/admission-queue.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import { GatewayError } from '../errors/gateway-error.js';

/** A configured model at run time: its engine and its admission queue. */
export interface ModelRuntime {
  config: ModelConfig;
  engine: InferenceEngine;
  admission: AdmissionQueue;
}

const DEFAULT_MAX_QUEUE = 1024;

/** The models this gateway serves, by the name clients send. */
export class ModelRegistry {
  private readonly byName = new Map<string, ModelRuntime>();

  constructor(models: Array<{ config: ModelConfig; engine: InferenceEngine }>) {
    for (const { config, engine } of models) {
      const admission = new AdmissionQueue({
        maxConcurrency: config.maxConcurrency ?? engine.defaultMaxConcurrency,
        maxQueue: config.maxQueue ?? DEFAULT_MAX_QUEUE,
        queueTimeoutMs: config.queueTimeoutMs,
      });
      this.byName.set(config.name, { config, engine, admission });
    }
  }

  /** The model named `name`, or a 404 in the client's protocol. */
  resolve(name: string): ModelRuntime {
    const model = this.byName.get(name);
    if (model) return model;
    throw new GatewayError('not_found', `The model '${name}' does not exist on this gateway.`, {
      param: 'model',
      code: 'model_not_found',
    });
  }

  list(): ModelRuntime[] {
    return [...this.byName.values()];
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.list().map((model) => model.engine.close()));
  }
}
