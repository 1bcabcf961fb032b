import type { ChatMessage, ContentPart, GenerationRequest, ResponseFormat } from '../../engine/generation-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { checkToolChoice } from '../tool-choice.js';
import type { ChatCompletionRequestDto, ChatContentPart, ChatMessageDto } from './chat-request.dto.js';

/** A validated Chat Completions request to the neutral GenerationRequest. */
export function decodeChatRequest(body: ChatCompletionRequestDto): GenerationRequest {
  const tools = (body.tools ?? []).map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
    strict: tool.function.strict,
  }));
  return {
    model: body.model,
    messages: body.messages.map(decodeMessage),
    tools,
    toolChoice: checkToolChoice(
      typeof body.tool_choice === 'object' ? { name: body.tool_choice.function.name } : body.tool_choice,
      tools.map((tool) => tool.name),
      'tool_choice',
    ),
    parallelToolCalls: body.parallel_tool_calls ?? true,
    sampling: {
      maxTokens: body.max_completion_tokens ?? body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      topK: body.top_k,
      seed: body.seed,
      stop: body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop,
      frequencyPenalty: body.frequency_penalty,
      presencePenalty: body.presence_penalty,
      responseFormat: decodeResponseFormat(body),
    },
    reasoning: body.reasoning_effort === undefined ? undefined : { enabled: body.reasoning_effort !== 'none' },
  };
}

function decodeMessage(message: ChatMessageDto, index: number): ChatMessage {
  if (message.tool_calls && message.role !== 'assistant') {
    throw new GatewayError('invalid_request', `messages[${index}]: only assistant messages carry tool_calls`, {
      param: `messages[${index}].tool_calls`,
    });
  }
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: joinText(message.content) };
    case 'user':
      return { role: 'user', content: toParts(message.content) };
    case 'assistant':
      return {
        role: 'assistant',
        content: joinText(message.content),
        reasoning: message.reasoning_content ?? message.reasoning,
        toolCalls: message.tool_calls?.map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
      };
    case 'tool':
      return { role: 'tool', toolCallId: message.tool_call_id!, content: joinText(message.content) };
  }
}

function joinText(content: string | ChatContentPart[] | null | undefined): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

function toParts(content: string | ChatContentPart[] | null | undefined): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return (content ?? []).flatMap((part): ContentPart[] => {
    if (part.type === 'text') return [{ type: 'text', text: part.text }];
    if (part.type === 'image_url') return [{ type: 'image', url: part.image_url.url }];
    return [];
  });
}

function decodeResponseFormat(body: ChatCompletionRequestDto): ResponseFormat | undefined {
  const format = body.response_format;
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    name: format.json_schema!.name,
    schema: format.json_schema!.schema ?? {},
    strict: format.json_schema!.strict,
  };
}
