import type { ModelConfig } from '../config/model-config.js';
import type { InferenceEngine } from '../engine/inference-engine.js';
import { HttpEngine } from './http/http-engine.js';
import { StubEngine } from './stub/stub-engine.js';

/**
 * The one place that knows every engine kind. Engines that need native modules are imported here
 * lazily, so the gateway starts without them when no model uses them.
 */
export async function createEngine(model: ModelConfig): Promise<InferenceEngine> {
  switch (model.engine) {
    case 'stub':
      return new StubEngine(model);
    case 'http':
      return new HttpEngine(model);
    case 'llama': {
      const { LlamaEngine } = await import('./llama/llama-engine.js');
      return LlamaEngine.load(model);
    }
    default:
      return assertNever(model);
  }
}

function assertNever(model: never): never {
  throw new Error(`Unknown engine kind: ${String((model as { engine?: unknown }).engine)}`);
}
