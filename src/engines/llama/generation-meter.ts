import { makeTimings, type AckEvent, type TokenUsage } from '../../engine/engine-event.js';

/**
 * Counts one generation's tokens and times it the way llama.cpp's server does: `prompt_ms` from
 * the start of prompt evaluation to the first sampled token, `predicted_ms` from that token on;
 * `prompt_n` counts the prompt tokens evaluated, `cache_n` those reused from the sequence's cache.
 */
export class GenerationMeter {
  private promptTokens = 0;
  private cachedTokens = 0;
  private completionTokens = 0;
  private reasoningTokens = 0;
  private evaluationStartedAt = 0;
  private prefillMs = 0;
  private firstTokenAt = 0;

  get completion(): number {
    return this.completionTokens;
  }

  /** Prompt evaluation starts: `cached` of the `total` prompt tokens are already in the sequence. */
  startPrompt(total: number, cached: number): void {
    this.promptTokens = total;
    this.cachedTokens = cached;
    this.evaluationStartedAt = performance.now();
  }

  /** A token was sampled; `reasoning` when it belongs to the reasoning. */
  countToken(reasoning: boolean): void {
    if (this.completionTokens === 0) {
      this.firstTokenAt = performance.now();
      this.prefillMs = this.firstTokenAt - this.evaluationStartedAt;
    }
    this.completionTokens += 1;
    if (reasoning) this.reasoningTokens += 1;
  }

  ack(): AckEvent {
    return {
      type: 'ack',
      usage: this.usage(),
      timings: makeTimings({
        promptN: this.promptTokens - this.cachedTokens,
        promptMs: this.prefillMs,
        predictedN: this.completionTokens,
        predictedMs: this.completionTokens > 0 ? performance.now() - this.firstTokenAt : 0,
        cacheN: this.cachedTokens,
      }),
    };
  }

  usage(): TokenUsage {
    return {
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      cachedTokens: this.cachedTokens,
      reasoningTokens: this.reasoningTokens,
    };
  }
}
