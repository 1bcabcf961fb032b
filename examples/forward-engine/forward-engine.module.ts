import { Module } from '@nestjs/common';
import { EngineKind, type EngineKindProvider } from '../../src/index.js';
import { ForwardEngine } from './forward-engine.js';
import { ForwardModelConfig } from './forward-model-config.js';

/**
 * `engine: forward`: each model entry of this kind is validated as a ForwardModelConfig, then
 * served by a ForwardEngine. A key missing from the environment refuses the model's start.
 */
@EngineKind('forward', { config: ForwardModelConfig })
export class ForwardEngineKind implements EngineKindProvider<ForwardModelConfig> {
  create(model: ForwardModelConfig): ForwardEngine {
    const apiKey = process.env[model.apiKeyEnv];
    if (!apiKey) throw new Error(`the environment variable ${model.apiKeyEnv} (apiKeyEnv) holds no key.`);
    return new ForwardEngine(model, apiKey);
  }
}

/** The plugin: list its built file under `plugins:` and `engine: forward` serves models. */
@Module({ providers: [ForwardEngineKind] })
export default class ForwardEnginePlugin {}
