import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  getLlama,
  resolveChatWrapper,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
} from 'node-llama-cpp';
import type { LlamaModelConfig } from './llama-model-config.js';

/** What one configured llama model holds while it serves: its weights, one context, its sequences. */
export interface LoadedLlamaModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequences: LlamaContextSequence[];
  chatWrapper: ChatWrapper;
}

/** One node-llama-cpp binding per backend choice, shared by every model that asks for it. */
const bindings = new Map<string, Promise<Llama>>();

function sharedLlama(gpu: LlamaModelConfig['gpu']): Promise<Llama> {
  const key = String(gpu);
  let binding = bindings.get(key);
  if (!binding) {
    // `build: 'never'`: use the prebuilt binaries only; a missing or broken one throws at once
    // instead of starting a cmake build that needs the network.
    binding = getLlama({ gpu, build: 'never' });
    bindings.set(key, binding);
    binding.catch(() => bindings.delete(key));
  }
  return binding;
}

/**
 * Loads the GGUF, creates one context with `sequences` sequences, and resolves the chat wrapper
 * from the file's own chat template. `gpuLayers: auto` offloads what fits when the binding found a
 * GPU (CUDA, Vulkan, Metal); on a CPU-only binding it means 0.
 */
export async function loadLlamaModel(config: LlamaModelConfig): Promise<LoadedLlamaModel> {
  const modelPath = resolve(config.modelPath);
  if (!existsSync(modelPath)) {
    throw new Error(`Model '${config.name}': no GGUF file at ${modelPath} (modelPath: ${config.modelPath}).`);
  }
  const llama = await sharedLlama(config.gpu);
  const model = await llama.loadModel({ modelPath, gpuLayers: llama.gpu === false ? 0 : config.gpuLayers });
  try {
    const context = await model.createContext({
      contextSize: config.contextSize,
      sequences: config.sequences,
      batchSize: config.batchSize,
      threads: config.threads,
    });
    const sequences = Array.from({ length: config.sequences }, () => context.getSequence());
    return { llama, model, context, sequences, chatWrapper: resolveChatWrapper(model) };
  } catch (error) {
    await model.dispose();
    throw error;
  }
}
