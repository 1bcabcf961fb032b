import type { GenerationResult } from '../../streaming/collect-generation.js';
import { thinkingSignature, toAnthropicStopReason, toAnthropicUsage } from './anthropic-usage.js';
import { toAnthropicToolUseId } from './tool-use-id.js';

/** The non-streaming Messages body (types/message.py). */
export function toAnthropicMessage(result: GenerationResult, identity: { id: string; model: string }) {
  const content: Array<Record<string, unknown>> = [];
  if (result.reasoning.length > 0) {
    content.push({ type: 'thinking', thinking: result.reasoning, signature: thinkingSignature(result.reasoning) });
  }
  if (result.text.length > 0) content.push({ type: 'text', text: result.text });
  result.toolCalls.forEach((call, index) => {
    // A call the engine gave no id gets one of its own in this message.
    const id = toAnthropicToolUseId(call.id || `${identity.id}_${index}`);
    content.push({ type: 'tool_use', id, name: call.name, input: parseToolInput(call.arguments) });
  });
  return {
    id: identity.id,
    type: 'message' as const,
    role: 'assistant' as const,
    model: identity.model,
    content,
    stop_reason: toAnthropicStopReason(result.finishReason, result.stopSequence),
    stop_sequence: result.stopSequence ?? null,
    usage: toAnthropicUsage(result.usage),
  };
}

/** Tool input is an object on Anthropic's wire; text that is not a JSON object is kept under `raw`. */
function parseToolInput(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text.length > 0 ? text : '{}');
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { raw: text };
}
