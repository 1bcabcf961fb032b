import type { GenerationResult } from '../../streaming/collect-generation.js';
import { toChatFinishReason, toChatUsage } from './chat-usage.js';

export interface ChatCompletionIdentity {
  id: string;
  model: string;
  created: number;
}

/** The non-streaming `chat.completion` body (chat_completion.py), with llama.cpp's `timings`. */
export function toChatCompletion(result: GenerationResult, identity: ChatCompletionIdentity) {
  const toolCalls = result.toolCalls.filter(Boolean).map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id: identity.id,
    object: 'chat.completion' as const,
    created: identity.created,
    model: identity.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: result.text.length > 0 || toolCalls.length === 0 ? result.text : null,
          refusal: null,
          ...(result.reasoning.length > 0 ? { reasoning_content: result.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: toChatFinishReason(result.finishReason),
      },
    ],
    usage: toChatUsage(result.usage),
    ...(result.timings ? { timings: result.timings } : {}),
  };
}
