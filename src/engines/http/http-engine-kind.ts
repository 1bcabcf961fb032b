import { EngineKind, type EngineKindProvider } from '../engine-kind.js';
import { HttpEngine } from './http-engine.js';
import { HttpModelConfig } from './http-model-config.js';

/** `engine: http`: a fleet of OpenAI-compatible upstreams. */
@EngineKind('http', { config: HttpModelConfig })
export class HttpEngineKind implements EngineKindProvider<HttpModelConfig> {
  create(model: HttpModelConfig): HttpEngine {
    return new HttpEngine(model);
  }
}
