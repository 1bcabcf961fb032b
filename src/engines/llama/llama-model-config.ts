import { availableParallelism } from 'node:os';
import { Equals, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Min, ValidateBy } from 'class-validator';
import { ModelConfigBase } from '../../config/model-config.js';

export const LLAMA_GPU_KINDS = ['auto', 'cuda', 'vulkan', 'metal', false] as const;

/**
 * A GGUF model run in-process by llama.cpp (node-llama-cpp). One context holds `sequences`
 * parallel requests; the admission queue lets that many run by default, so further requests wait
 * there (with keep-alives) instead of inside the engine.
 */
export class LlamaModelConfig extends ModelConfigBase {
  @Equals('llama')
  override engine!: 'llama';

  /** The GGUF file; relative paths resolve against the working directory. */
  @IsString()
  @IsNotEmpty()
  modelPath!: string;

  /** Tokens each sequence can hold (prompt and answer together). */
  @IsInt()
  @Min(64)
  contextSize: number = 4096;

  /** Requests decoded at once on one context, batched into the same decode steps. */
  @IsInt()
  @Min(1)
  sequences: number = 4;

  /** Layers offloaded to the GPU: `auto` fits as many as memory allows when a GPU is found; 0 = CPU only. */
  @IsAutoOrNonNegativeInt()
  gpuLayers: 'auto' | number = 'auto';

  /** The compute backend: `auto` uses CUDA, Vulkan or Metal when node-llama-cpp finds one; false = CPU. */
  @IsIn(LLAMA_GPU_KINDS)
  gpu: (typeof LLAMA_GPU_KINDS)[number] = 'auto';

  /** Tokens per decode call (llama.cpp n_batch); node-llama-cpp's default (512) when unset. */
  @IsOptional()
  @IsInt()
  @Min(1)
  batchSize?: number;

  /** CPU threads per decode. Set it: more threads than cores makes decoding many times slower. */
  @IsInt()
  @Min(1)
  threads: number = Math.min(4, availableParallelism());

  /**
   * For models that reason in `<think>` tags (Qwen3, QwQ, DeepSeek-R1): when the client did not ask
   * for reasoning, the answer starts after an empty, closed thought (`<think>\n\n</think>\n\n`),
   * as Qwen3's template does with `enable_thinking: false` and llama.cpp with a reasoning budget
   * of 0, so the model answers at once. Off by default: other models would read the tags as text.
   */
  @IsBoolean()
  disableReasoning: boolean = false;
}

/** The keyword `auto` or an integer >= 0 (`gpuLayers`). */
function IsAutoOrNonNegativeInt(): PropertyDecorator {
  return ValidateBy({
    name: 'isAutoOrNonNegativeInt',
    validator: {
      validate: (value) => value === 'auto' || (Number.isInteger(value) && (value as number) >= 0),
      defaultMessage: (args) => `${args?.property} must be "auto" or an integer >= 0`,
    },
  });
}
