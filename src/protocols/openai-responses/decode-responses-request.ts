import type {
  AssistantMessage,
  ChatMessage,
  ContentPart,
  GenerationRequest,
  ResponseFormat,
} from '../../engine/generation-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ReasoningCipher } from './reasoning-cipher.js';
import type {
  ResponsesContentPart,
  ResponsesInputItem,
  ResponsesMessageItem,
  ResponsesToolOutput,
} from './responses-input.js';
import type { ResponsesPromptDto, ResponsesRequestDto } from './responses-request.dto.js';
import { decodeResponsesToolChoice } from './responses-tool-choice.js';
import { customToolArguments, flatToolName, readResponsesTools, type ToolList } from './responses-tools.js';

/**
 * A validated Responses request to the neutral GenerationRequest. Sealed reasoning sent back in
 * `input` is opened with `cipher`. Stored state must already be in the body: the stateful layer
 * (src/stored-responses) puts the stored conversation in `input` and the items in place of their
 * references, and removes `previous_response_id`; what is left of it here is refused (the store
 * is off).
 */
export function decodeResponsesRequest(
  body: ResponsesRequestDto,
  cipher: Pick<ReasoningCipher, 'open'>,
): GenerationRequest {
  if (body.background === true) {
    throw new GatewayError(
      'invalid_request',
      'background responses are not supported: this gateway stores no responses',
      { param: 'background' },
    );
  }
  return {
    ...decodeResponsesPrompt(body, cipher),
    sampling: {
      maxTokens: body.max_output_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      stop: [],
      responseFormat: decodeFormat(body),
    },
  };
}

/** A Responses prompt: what a request would show the model (`input_tokens` counts it), read as a create reads it. */
export type ResponsesPrompt = ResponsesPromptDto & { input: string | ResponsesInputItem[] };

/** The prompt half of a Responses request, shared with `input_tokens`; its sampling holds only the response format. */
export function decodeResponsesPrompt(body: ResponsesPrompt, cipher: Pick<ReasoningCipher, 'open'>): GenerationRequest {
  if (body.previous_response_id !== undefined || body.conversation !== undefined) {
    const param = body.previous_response_id !== undefined ? 'previous_response_id' : 'conversation';
    throw new GatewayError(
      'invalid_request',
      `${param} is not supported: this gateway stores no responses; send the whole conversation as input`,
      { param },
    );
  }
  const reference =
    typeof body.input === 'string' ? -1 : body.input.findIndex((item) => item.type === 'item_reference');
  if (reference !== -1) {
    throw new GatewayError(
      'invalid_request',
      `input[${reference}] is an item_reference, and this gateway stores no responses: send the item itself`,
      {
        param: `input[${reference}]`,
      },
    );
  }
  const toolset = readResponsesTools(body.tools, additionalToolLists(body.input));
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  for (const message of decodeInput(body.input, cipher)) messages.push(message);
  return {
    model: body.model,
    messages,
    tools: toolset.definitions,
    toolChoice: decodeResponsesToolChoice(body.tool_choice, toolset),
    parallelToolCalls: body.parallel_tool_calls ?? true,
    sampling: { stop: [], responseFormat: decodeFormat(body) },
    reasoning: body.reasoning?.effort == null ? undefined : { enabled: body.reasoning.effort !== 'none' },
  };
}

/** The tools of `additional_tools` input items, named by where they were given. */
function additionalToolLists(input: string | ResponsesInputItem[]): ToolList[] {
  if (typeof input === 'string') return [];
  const lists: ToolList[] = [];
  input.forEach((item, index) => {
    if (item.type === 'additional_tools') lists.push({ path: `input[${index}].tools`, tools: item.tools });
  });
  return lists;
}

/**
 * Input items to messages. Consecutive tool calls (and a reasoning item before them) join the
 * assistant turn they belong to, as Chat Completions carries them. Namespaced calls go back
 * under the flat name the model was offered; custom tool calls as a function taking `input`.
 */
function decodeInput(input: string | ResponsesInputItem[], cipher: Pick<ReasoningCipher, 'open'>): ChatMessage[] {
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
  const addCall = (id: string, name: string, argumentsText: string) => {
    const turn = assistantTurn();
    turn.toolCalls = [...(turn.toolCalls ?? []), { id, name, arguments: argumentsText }];
  };
  input.forEach((item, index) => {
    switch (item.type ?? 'message') {
      case 'reasoning': {
        pendingReasoning += reasoningText(item as Extract<ResponsesInputItem, { type: 'reasoning' }>, index, cipher);
        break;
      }
      case 'additional_tools':
        // Offered with the request's own tools (see additionalToolLists): the engines take one list.
        break;
      case 'function_call': {
        const call = item as Extract<ResponsesInputItem, { type: 'function_call' }>;
        addCall(call.call_id, flatToolName(call.namespace ?? undefined, call.name), call.arguments);
        break;
      }
      case 'custom_tool_call': {
        const call = item as Extract<ResponsesInputItem, { type: 'custom_tool_call' }>;
        addCall(call.call_id, flatToolName(call.namespace ?? undefined, call.name), customToolArguments(call.input));
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output = item as Extract<
          ResponsesInputItem,
          { type: 'function_call_output' | 'custom_tool_call_output' }
        >;
        messages.push({ role: 'tool', toolCallId: output.call_id, content: toolOutputText(output.output) });
        break;
      }
      default: {
        const message = item as ResponsesMessageItem;
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
  });
  return messages;
}

/**
 * The reasoning an item carries: the sealed text when there is one (it is whole, where a
 * summary may be all a client kept), else its raw text, else its summary.
 */
function reasoningText(
  item: Extract<ResponsesInputItem, { type: 'reasoning' }>,
  index: number,
  cipher: Pick<ReasoningCipher, 'open'>,
): string {
  if (typeof item.encrypted_content === 'string') {
    const text = cipher.open(item.encrypted_content);
    if (text === undefined) {
      throw new GatewayError(
        'invalid_request',
        `input[${index}].encrypted_content cannot be read by this gateway: it was altered, sealed for another API key, or sealed with another key (without responses.encryptionKey, a gateway makes a new key at each start)`,
        { param: `input[${index}].encrypted_content`, code: 'invalid_encrypted_content' },
      );
    }
    return text;
  }
  return (item.content ?? item.summary ?? []).map((part) => part.text).join('');
}

function toolOutputText(output: ResponsesToolOutput): string {
  if (typeof output === 'string') return output;
  return output.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('\n');
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

function decodeFormat(body: ResponsesPromptDto): ResponseFormat | undefined {
  const format = body.text?.format;
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  return { type: 'json_schema', name: format.name!, schema: format.schema ?? {}, strict: format.strict };
}
