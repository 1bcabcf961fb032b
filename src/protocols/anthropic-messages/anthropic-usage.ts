import { createHash } from 'node:crypto';
import type { FinishReason, TokenUsage } from '../../engine/engine-event.js';

/** Anthropic's count of a prompt: `input_tokens` excludes what was read from a cache, which is counted apart. */
export interface AnthropicInputUsage {
  input_tokens: number;
  cache_read_input_tokens?: number;
}

export function toAnthropicInput(usage: Pick<TokenUsage, 'promptTokens' | 'cachedTokens'>): AnthropicInputUsage {
  return usage.cachedTokens > 0
    ? { input_tokens: usage.promptTokens - usage.cachedTokens, cache_read_input_tokens: usage.cachedTokens }
    : { input_tokens: usage.promptTokens };
}

/** A usage block: the prompt's count and the output tokens. */
export function anthropicUsage(input: AnthropicInputUsage, outputTokens: number) {
  return {
    input_tokens: input.input_tokens,
    output_tokens: outputTokens,
    ...(input.cache_read_input_tokens !== undefined ? { cache_read_input_tokens: input.cache_read_input_tokens } : {}),
  };
}

export function toAnthropicUsage(usage: TokenUsage) {
  return anthropicUsage(toAnthropicInput(usage), usage.completionTokens);
}

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/** Anthropic tells a matched stop sequence apart from a natural end. */
export function toAnthropicStopReason(reason: FinishReason, stopSequence: string | undefined): AnthropicStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence !== undefined ? 'stop_sequence' : 'end_turn';
  }
}

/**
 * A thinking block's signature. Anthropic signs thinking so it can be verified when sent back;
 * Gantry's engines have nothing to sign with, so this is a digest of the text: stable, opaque,
 * and ignored on input.
 */
export function thinkingSignature(thinking: string): string {
  return createHash('sha256').update(thinking).digest('base64');
}
