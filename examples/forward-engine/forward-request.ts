import type { ChatMessage, GenerationRequest } from '../../src/index.js';

/** A generation as an OpenAI Chat Completions body, streamed with its usage. */
export function chatCompletionsBody(request: GenerationRequest, model: string): Record<string, unknown> {
  const { sampling } = request;
  return {
    model,
    messages: request.messages.map(chatMessage),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: sampling.maxTokens,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    seed: sampling.seed,
    stop: sampling.stop.length > 0 ? sampling.stop : undefined,
    tools:
      request.tools.length > 0
        ? request.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          }))
        : undefined,
    tool_choice:
      request.tools.length === 0
        ? undefined
        : typeof request.toolChoice === 'string'
          ? request.toolChoice
          : { type: 'function', function: request.toolChoice },
  };
}

function chatMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: message.content.map((part) =>
          part.type === 'text'
            ? { type: 'text', text: part.text }
            : { type: 'image_url', image_url: { url: part.url } },
        ),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        tool_calls: message.toolCalls?.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
