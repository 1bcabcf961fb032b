import type { AssistantMessage, ChatMessage, ContentPart, GenerationRequest, ResponseFormat } from '../../engine/generation-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { checkToolChoice } from '../tool-choice.js';
import type { ResponsesContentPart, ResponsesInputItem } from './responses-input.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

/** A validated Responses request to the neutral GenerationRequest. Stored state is refused. */
export function decodeResponsesRequest(body: ResponsesRequestDto): GenerationRequest {
  if (body.previous_response_id !== undefined || body.conversation !== undefined) {
    const param = body.previous_response_id !== undefined ? 'previous_response_id' : 'conversation';
    throw new GatewayError('invalid_request', `${param} is not supported: this gateway stores no responses; send the whole conversation as input`, { param });
  }
  if (body.background === true) {
    throw new GatewayError('invalid_request', 'background responses are not supported: this gateway stores no responses', { param: 'background' });
  }
  const tools = (body.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
  }));
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  for (const message of decodeInput(body.input)) messages.push(message);
  return {
    model: body.model,
    messages,
    tools,
    toolChoice: checkToolChoice(body.tool_choice, tools.map((tool) => tool.name), 'tool_choice'),
    parallelToolCalls: body.parallel_tool_calls ?? true,
    sampling: {
      maxTokens: body.max_output_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      stop: [],
      responseFormat: decodeFormat(body),
    },
    reasoning: body.reasoning?.effort === undefined ? undefined : { enabled: body.reasoning.effort !== 'none' },
  };
}

/**
 * Input items to messages. Consecutive function calls (and a reasoning item before them) join
 * the assistant turn they belong to, as Chat Completions carries them.
 */
function decodeInput(input: string | ResponsesInputItem[]): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  const messages: ChatMessage[] = [];
  let pendingReasoning = '';
  const assistantTurn = (): AssistantMessage => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const turn: AssistantMessage = { role: 'assistant', content: '' };
    messages.push(turn);
    return turn;
  };
  for (const item of input) {
    switch (item.type ?? 'message') {
      case 'reasoning': {
        const reasoning = item as Extract<ResponsesInputItem, { type: 'reasoning' }>;
        pendingReasoning += (reasoning.content ?? reasoning.summary ?? []).map((part) => part.text).join('');
        break;
      }
      case 'function_call': {
        const call = item as Extract<ResponsesInputItem, { type: 'function_call' }>;
        const turn = assistantTurn();
        turn.toolCalls = [...(turn.toolCalls ?? []), { id: call.call_id, name: call.name, arguments: call.arguments }];
        break;
      }
      case 'function_call_output': {
        const output = item as Extract<ResponsesInputItem, { type: 'function_call_output' }>;
        const text = typeof output.output === 'string' ? output.output : output.output.map((part) => part.text).join('\n');
        messages.push({ role: 'tool', toolCallId: output.call_id, content: text });
        break;
      }
      default: {
        const message = item as Extract<ResponsesInputItem, { role: string }>;
        if (message.role === 'assistant') {
          const turn = assistantTurn();
          turn.content += joinText(message.content);
        } else if (message.role === 'user') {
          messages.push({ role: 'user', content: toParts(message.content) });
        } else {
          messages.push({ role: 'system', content: joinText(message.content) });
        }
      }
    }
    const last = messages.at(-1);
    if (pendingReasoning && last?.role === 'assistant') {
      last.reasoning = (last.reasoning ?? '') + pendingReasoning;
      pendingReasoning = '';
    }
  }
  return messages;
}

function joinText(content: string | ResponsesContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.flatMap((part) => ('text' in part ? [part.text] : [])).join('\n');
}

function toParts(content: string | ResponsesContentPart[]): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.flatMap((part): ContentPart[] => {
    if (part.type === 'input_text' || part.type === 'output_text') return [{ type: 'text', text: part.text }];
    if (part.type === 'input_image' && part.image_url) return [{ type: 'image', url: part.image_url }];
    return [];
  });
}

function decodeFormat(body: ResponsesRequestDto): ResponseFormat | undefined {
  const format = body.text?.format;
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  return { type: 'json_schema', name: format.name!, schema: format.schema ?? {}, strict: format.strict };
}
