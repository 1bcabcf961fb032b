import { GENERATION_APIS, MODEL_APIS, type ModelApi } from '../config/model-apis.js';
import type { ModelConfig } from '../config/model-config.js';
import type { InferenceEngine } from '../engine/inference-engine.js';

/** Whether the engine has what the API needs: `generate` (every engine) or its pooling method. */
export function engineServes(engine: InferenceEngine, api: ModelApi): boolean {
  switch (api) {
    case 'embeddings':
      return typeof engine.embed === 'function';
    case 'rerank':
      return typeof engine.rerank === 'function';
    case 'score':
      return typeof engine.score === 'function';
    default:
      return GENERATION_APIS.includes(api);
  }
}

/** Whether a model serves the API: among its `apis` when it lists them, else whatever its engine can. */
export function modelServes(config: ModelConfig, engine: InferenceEngine, api: ModelApi): boolean {
  return config.apis === undefined ? engineServes(engine, api) : config.apis.includes(api) && engineServes(engine, api);
}

/** The APIs a model serves, in the order of MODEL_APIS (what `/v1/models` shows). */
export function servedApis(config: ModelConfig, engine: InferenceEngine): ModelApi[] {
  return MODEL_APIS.filter((api) => modelServes(config, engine, api));
}
