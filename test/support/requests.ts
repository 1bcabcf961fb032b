import type { ChatMessage, GenerationRequest } from '../../src/engine/generation-request.js';

/** A neutral request with defaults, for engine and encoder unit tests. */
export function generationRequest(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    model: 'stub',
    messages: [userMessage('Hello there world')],
    tools: [],
    toolChoice: 'auto',
    parallelToolCalls: true,
    sampling: { stop: [] },
    ...overrides,
  };
}

export function userMessage(text: string): ChatMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}
