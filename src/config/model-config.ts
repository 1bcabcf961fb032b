import { availableParallelism } from 'node:os';
import {
  ArrayNotEmpty,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Min,
  ValidateBy,
} from 'class-validator';
import { IsStringRecord } from './string-record.validator.js';

/** Keys every model entry has, whatever its engine. */
export abstract class ModelConfigBase {
  /** The name clients send as `model`. */
  @IsString()
  @Matches(/^[\w.:/@-]+$/, { message: 'name may hold only letters, digits and . : / @ _ -' })
  name!: string;

  abstract engine: string;

  /** Requests running on the engine at once; more wait in the queue. Unlimited by default. */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxConcurrency?: number;

  /** Requests allowed to wait for a slot; past it, requests are refused before their stream opens. */
  @IsOptional()
  @IsInt()
  @Min(0)
  maxQueue?: number;

  /** How long a request may wait in the queue before it fails in-band. */
  @IsOptional()
  @IsInt()
  @Min(1)
  queueTimeoutMs?: number;

  /**
   * The largest `max_tokens` (`max_completion_tokens`, `max_output_tokens`) a request may ask
   * for; larger ones get 400, and requests that ask for none get this ceiling.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxTokensLimit?: number;
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

export const STUB_FAILURE_KINDS = ['overloaded', 'invalid_request', 'upstream', 'internal', 'timeout'] as const;

/** The built-in deterministic engine (no model): echoes the last user message word by word. */
export class StubModelConfig extends ModelConfigBase {
  @Equals('stub')
  engine!: 'stub';

  /** Delay before the first ack (the end of prefill). */
  @IsInt()
  @Min(0)
  prefillMs: number = 0;

  /** Delay between tokens. */
  @IsInt()
  @Min(0)
  tokenIntervalMs: number = 0;

  /** A text streamed as reasoning deltas before the answer. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  reasoning?: string;

  /** Fails the stream after this many tokens. */
  @IsOptional()
  @IsInt()
  @Min(0)
  failAfterTokens?: number;

  /** The kind of the injected failure. */
  @IsIn(STUB_FAILURE_KINDS)
  failWith: (typeof STUB_FAILURE_KINDS)[number] = 'internal';
}

/**
 * A fleet of OpenAI-compatible upstreams (vLLM, SGLang, llama.cpp server, TGI, Ollama) serving one
 * model. Requests are balanced by least outstanding requests over the healthy replicas.
 */
export class HttpModelConfig extends ModelConfigBase {
  @Equals('http')
  engine!: 'http';

  /** Base URLs of the replicas, including the API prefix: `http://10.0.0.5:8000/v1`. */
  @IsArray()
  @ArrayNotEmpty()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { each: true, message: 'upstreams must hold http(s) URLs such as http://10.0.0.5:8000/v1' },
  )
  upstreams!: string[];

  /** The model name the upstreams know; the gateway's `name` when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  upstreamModel?: string;

  /** Sent as `Authorization: Bearer <apiKey>`. */
  @IsOptional()
  @IsString()
  apiKey?: string;

  /** Extra headers on every upstream request. */
  @IsOptional()
  @IsStringRecord()
  headers?: Record<string, string>;

  /** Ask for vLLM's `continuous_usage_stats` (usage on every chunk); turn off for upstreams that refuse it. */
  @IsBoolean()
  continuousUsage: boolean = true;

  @IsInt()
  @Min(1)
  connectTimeoutMs: number = 5_000;

  /** Wait for the response headers; some upstreams send them only after prefill. 0: no limit. */
  @IsInt()
  @Min(0)
  headersTimeoutMs: number = 600_000;

  /** Longest silence between two body reads (a long prefill is silent). 0: no limit. */
  @IsInt()
  @Min(0)
  bodyTimeoutMs: number = 600_000;

  /** Period of the active `GET /health` check of each replica. 0: passive checks only. */
  @IsInt()
  @Min(0)
  healthCheckIntervalMs: number = 5_000;

  @IsInt()
  @Min(1)
  healthCheckTimeoutMs: number = 2_000;

  /** Consecutive failed requests after which a replica is ejected. */
  @IsInt()
  @Min(1)
  maxFailures: number = 3;

  /** First ejection length; each further ejection doubles it, up to `ejectionMaxMs`. */
  @IsInt()
  @Min(1)
  ejectionBaseMs: number = 1_000;

  @IsInt()
  @Min(1)
  ejectionMaxMs: number = 60_000;
}


export const LLAMA_GPU_KINDS = ['auto', 'cuda', 'vulkan', 'metal', false] as const;

/**
 * A GGUF model run in-process by llama.cpp (node-llama-cpp). One context holds `sequences`
 * parallel requests; the admission queue lets that many run by default, so further requests wait
 * there (with keep-alives) instead of inside the engine.
 */
export class LlamaModelConfig extends ModelConfigBase {
  @Equals('llama')
  engine!: 'llama';

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
}

export type ModelConfig = StubModelConfig | HttpModelConfig | LlamaModelConfig;
export type EngineKind = ModelConfig['engine'];
