import { Observable } from 'rxjs';
import type { LlamaContextSequence } from 'node-llama-cpp';
import type { LlamaModelConfig } from './llama-model-config.js';
import { renderChatPrompt } from './chat-prompt.js';
import { EngineError } from '../../engine/engine-error.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { InferenceEngine } from '../../engine/inference-engine.js';
import { LlamaGeneration, type LlamaCounters } from './llama-generation.js';
import { loadLlamaModel, type LoadedLlamaModel } from './llama-runtime.js';
import { SequencePool } from './sequence-pool.js';
import { LlamaEmbedder } from './llama-embedding.js';
import type { EmbeddingRequest, EmbeddingResult, PoolingContext } from '../../engine/pooling.js';

/**
 * llama.cpp in-process through node-llama-cpp: one GGUF, one context, `sequences` requests decoded
 * together in the same batches.
 *
 * `generate` is cold: subscribing renders the prompt and borrows a sequence; unsubscribing stops
 * decoding at the next token and returns the sequence. `close` cancels what runs, awaits every
 * generation's last native step, and only then disposes the context and the model (disposing under
 * a running decode crashes the process).
 */
export class LlamaEngine extends InferenceEngine {
  private readonly pool: SequencePool<LlamaContextSequence>;
  private readonly generations = new Set<LlamaGeneration>();
  private readonly running = new Set<Promise<void>>();
  private readonly counters: LlamaCounters = {
    decodedTokens: 0,
    cancelledInPrefill: 0,
    cancelledInDecode: 0,
    decodedAfterCancel: 0,
  };
  private closed?: Promise<void>;
  private readonly embedder: LlamaEmbedder;

  private constructor(
    private readonly config: LlamaModelConfig,
    private readonly loaded: LoadedLlamaModel,
  ) {
    super();
    this.embedder = new LlamaEmbedder(loaded.model, config);
    this.pool = new SequencePool(
      loaded.sequences,
      (sequence, prompt) =>
        sequence.compareContextTokens(prompt as LlamaContextSequence['contextTokens']).firstDifferentIndex,
    );
  }

  /** Loads the model; the gateway does not start serving until every engine is loaded. */
  static async load(config: LlamaModelConfig): Promise<LlamaEngine> {
    return new LlamaEngine(config, await loadLlamaModel(config));
  }

  override isReady(): boolean {
    return this.closed === undefined;
  }

  override get defaultMaxConcurrency(): number {
    return this.config.sequences;
  }

  /** Generations subscribed and not yet finished (their sequence not yet returned). */
  get activeGenerations(): number {
    return this.running.size;
  }

  get idleSequences(): number {
    return this.pool.idleCount;
  }

  /** Tokens decoded so far, and how many of them finished after their generation was cancelled. */
  get stats(): Readonly<LlamaCounters> {
    return { ...this.counters };
  }

  /** The loaded model (tokenizer, file insights), for callers that need to count tokens. */
  get model(): LoadedLlamaModel['model'] {
    return this.loaded.model;
  }

  /** The chat wrapper resolved from the model's template, which renders every prompt. */
  get chatWrapper(): LoadedLlamaModel['chatWrapper'] {
    return this.loaded.chatWrapper;
  }

  /** Exact: the prompt as the model's template renders it, tokenized by the model's tokenizer. */
  override async countPromptTokens(request: GenerationRequest): Promise<number> {
    return renderChatPrompt(this.loaded.chatWrapper, this.loaded.model.tokenizer, request, this.config.disableReasoning)
      .tokens.length;
  }

  generate(request: GenerationRequest): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      if (this.closed) {
        subscriber.error(new EngineError('overloaded', `Model '${this.config.name}' is shutting down.`));
        return;
      }
      const deps = {
        loaded: this.loaded,
        pool: this.pool,
        counters: this.counters,
        disableReasoning: this.config.disableReasoning,
      };
      const generation = new LlamaGeneration(deps, request, subscriber);
      this.generations.add(generation);
      const run = generation.run().finally(() => {
        this.generations.delete(generation);
        this.running.delete(run);
      });
      this.running.add(run);
      return () => generation.cancel();
    });
  }

  /** Through the model's embedding context, made on the first request (llama-embedding.ts). */
  override embed(request: EmbeddingRequest, context: PoolingContext): Promise<EmbeddingResult> {
    if (this.closed)
      return Promise.reject(new EngineError('overloaded', `Model '${this.config.name}' is shutting down.`));
    return this.embedder.embed(request, context);
  }

  override close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    const shuttingDown = new EngineError('overloaded', `Model '${this.config.name}' is shutting down.`);
    this.pool.close(shuttingDown);
    for (const generation of this.generations) generation.cancel(shuttingDown);
    await Promise.allSettled(this.running);
    await this.embedder.dispose();
    await this.loaded.context.dispose();
    await this.loaded.model.dispose();
  }
}
