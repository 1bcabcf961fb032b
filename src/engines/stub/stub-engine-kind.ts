import { EngineKind, type EngineKindProvider } from '../engine-kind.js';
import { StubEngine } from './stub-engine.js';
import { StubModelConfig } from './stub-model-config.js';

/** `engine: stub`: the deterministic engine with no model. */
@EngineKind('stub', { config: StubModelConfig })
export class StubEngineKind implements EngineKindProvider<StubModelConfig> {
  create(model: StubModelConfig): StubEngine {
    return new StubEngine(model);
  }
}
