import type { GenerationRequest } from './generation-request.js';

/**
 * A tokenizer-free estimate of a prompt's tokens (about four characters a token for English),
 * for engines that cannot count exactly.
 */
export function estimatePromptTokens(request: GenerationRequest): number {
  let characters = 0;
  for (const message of request.messages) {
    if (message.role === 'user') {
      for (const part of message.content) characters += part.type === 'text' ? part.text.length : 0;
    } else {
      characters += message.content.length;
    }
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) characters += call.name.length + call.arguments.length;
    }
  }
  for (const tool of request.tools)
    characters += tool.name.length + JSON.stringify(tool.parameters ?? {}).length + (tool.description?.length ?? 0);
  return Math.ceil(characters / 4);
}
