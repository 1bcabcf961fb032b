import { EngineError } from './engine-error.js';

/**
 * A prompt longer than the model's context window. Each protocol words it as its own API does
 * (OpenAI's `context_length_exceeded`, Anthropic's "prompt is too long"), so it carries the two
 * numbers, when the engine knows them, rather than a finished sentence.
 */
export class ContextLengthError extends EngineError {
  constructor(
    readonly promptTokens?: number,
    readonly contextLength?: number,
  ) {
    super(
      'invalid_request',
      promptTokens !== undefined && contextLength !== undefined
        ? `The prompt is ${promptTokens} tokens; this model's context holds ${contextLength} (prompt and answer together).`
        : "The prompt is longer than this model's context window.",
      { param: 'messages', code: 'context_length_exceeded' },
    );
    this.name = 'ContextLengthError';
  }
}
