import type { TokenUsage } from '../../engine/engine-event.js';

/** Chat Completions `usage` (completion_usage.py); the details appear only when they say something. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

export function toChatUsage(usage: TokenUsage): ChatUsage {
  const chatUsage: ChatUsage = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
  if (usage.cachedTokens > 0) chatUsage.prompt_tokens_details = { cached_tokens: usage.cachedTokens };
  if (usage.reasoningTokens > 0) chatUsage.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return chatUsage;
}

/** Finish reasons a Chat Completions client understands; an aborted stream has no reader left. */
export function toChatFinishReason(reason: string): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (reason) {
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    default:
      return 'stop';
  }
}
