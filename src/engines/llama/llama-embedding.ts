import type { LlamaEmbeddingContext, LlamaModel, Token } from 'node-llama-cpp';
import { EngineError } from '../../engine/engine-error.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import type { EmbeddingRequest, EmbeddingResult, PoolingContext } from '../../engine/pooling.js';
import type { LlamaModelConfig } from './llama-model-config.js';

/**
 * A llama model's embeddings, through node-llama-cpp's embedding context: made on the first
 * request (a model that is never asked to embed holds none), one input at a time, each checked
 * against the context before it runs. An aborted request stops before its next input.
 */
export class LlamaEmbedder {
  private context?: Promise<LlamaEmbeddingContext>;
  /** One input at a time: the embedding context holds one sequence. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly model: LlamaModel,
    private readonly config: LlamaModelConfig,
  ) {}

  embed(request: EmbeddingRequest, { signal }: PoolingContext): Promise<EmbeddingResult> {
    const run = this.queue.then(() => this.run(request, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async dispose(): Promise<void> {
    await this.queue;
    const context = await this.context?.catch(() => undefined);
    await context?.dispose();
  }

  private async run(request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult> {
    const context = await (this.context ??= this.model.createEmbeddingContext({
      contextSize: this.config.contextSize,
      threads: this.config.threads,
    }));
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const [index, input] of request.input.entries()) {
      signal.throwIfAborted();
      const tokens = typeof input === 'string' ? this.model.tokenize(input) : input;
      if (tokens.length > this.config.contextSize)
        throw new EngineError(
          'invalid_request',
          `input[${index}] has ${tokens.length} tokens; model '${this.config.name}' embeds at most ${this.config.contextSize}.`,
          { param: 'input', code: 'context_length_exceeded' },
        );
      const embedding = await context.getEmbeddingFor(tokens as Token[]);
      promptTokens += tokens.length;
      vectors.push(truncated([...embedding.vector], request.dimensions));
    }
    return { vectors, usage: { ...ZERO_USAGE, promptTokens } };
  }
}

/** `dimensions` as Matryoshka models read it: the first N values, normalized again. */
function truncated(vector: number[], dimensions: number | undefined): number[] {
  if (dimensions === undefined || dimensions >= vector.length) return vector;
  const head = vector.slice(0, dimensions);
  const norm = Math.hypot(...head) || 1;
  return head.map((value) => value / norm);
}
