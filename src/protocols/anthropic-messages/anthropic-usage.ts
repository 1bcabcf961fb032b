import { createHash } from 'node:crypto';
import type { FinishReason, TokenUsage } from '../../engine/engine-event.js';

/** Anthropic usage: `input_tokens` excludes what was read from a cache, which is counted apart. */
export function toAnthropicUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.promptTokens - usage.cachedTokens,
    output_tokens: usage.completionTokens,
    ...(usage.cachedTokens > 0 ? { cache_read_input_tokens: usage.cachedTokens } : {}),
  };
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
