import type { InferenceEngine } from '../../engine/inference-engine.js';
import { EngineKind, type EngineKindProvider } from '../engine-kind.js';
import { LlamaModelConfig } from './llama-model-config.js';

/** The node-llama-cpp release Gantry is built and tested with: package.json's optional dependency. */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

/**
 * `engine: llama`: a GGUF run in-process by node-llama-cpp, an optional dependency (its native
 * builds weigh hundreds of MB). It is imported only when a llama model starts, so that a gateway
 * installed without it serves every other kind.
 */
@EngineKind('llama', { config: LlamaModelConfig, singleProcess: true })
export class LlamaEngineKind implements EngineKindProvider<LlamaModelConfig> {
  async create(model: LlamaModelConfig): Promise<InferenceEngine> {
    const { LlamaEngine } = await importLlamaEngine();
    return LlamaEngine.load(model);
  }
}

/** The llama engine's module; a missing node-llama-cpp becomes a message saying how to add it. */
async function importLlamaEngine(): Promise<typeof import('./llama-engine.js')> {
  try {
    return await import('./llama-engine.js');
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(message).includes("'node-llama-cpp'")) throw error;
    throw new Error(
      `the llama engine needs node-llama-cpp, an optional dependency that is not installed here. Add it beside Gantry ` +
        `(npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION}), or install Gantry without --omit=optional.`,
      { cause: error },
    );
  }
}
