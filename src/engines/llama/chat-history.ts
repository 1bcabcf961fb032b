import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatModelResponse } from 'node-llama-cpp';
import { EngineError } from '../../engine/engine-error.js';
import type { AssistantMessage, GenerationRequest } from '../../engine/generation-request.js';
import { textOf } from '../../engine/generation-request.js';

type FunctionParams = ChatModelFunctions[string]['params'];

/**
 * The request's messages as node-llama-cpp chat history, ending with the model turn to generate.
 * Tool results are attached to the calls they answer and the model's turn continues after them
 * (as the chat wrappers render it); a result whose call is unknown becomes a user message. A
 * trailing assistant message is continued, not closed (a prefill). Images are refused: the engine
 * runs text-only GGUF models.
 */
export function toChatHistory(request: GenerationRequest): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const callsById = new Map<string, ChatModelFunctionCall>();
  for (const message of request.messages) {
    switch (message.role) {
      case 'system':
        history.push({ type: 'system', text: message.content });
        break;
      case 'user':
        if (message.content.some((part) => part.type === 'image')) {
          throw new EngineError('invalid_request', 'This model takes text only; image parts are not supported.', {
            param: 'messages',
          });
        }
        history.push({ type: 'user', text: textOf(message) });
        break;
      case 'assistant': {
        const response = modelResponse(message, callsById);
        const last = history.at(-1);
        // After tool results the model's turn goes on: node-llama-cpp keeps it one response.
        if (last?.type === 'model' && isFunctionCall(last.response.at(-1))) last.response.push(...response.response);
        else history.push(response);
        break;
      }
      case 'tool': {
        const call = callsById.get(message.toolCallId);
        if (call) call.result = message.content;
        else history.push({ type: 'user', text: message.content });
        break;
      }
    }
  }
  if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
  return history;
}

function isFunctionCall(item: ChatModelResponse['response'][number] | undefined): item is ChatModelFunctionCall {
  return typeof item === 'object' && item.type === 'functionCall';
}

/** The tools the template should describe: none for `tool_choice: none`, only the named one when one is named. */
export function toChatFunctions(request: GenerationRequest): ChatModelFunctions | undefined {
  const choice = request.toolChoice;
  if (choice === 'none' || request.tools.length === 0) return undefined;
  const tools = typeof choice === 'object' ? request.tools.filter((tool) => tool.name === choice.name) : request.tools;
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const tool of tools) {
    functions[tool.name] = { description: tool.description, params: tool.parameters as FunctionParams };
  }
  return functions;
}

function modelResponse(message: AssistantMessage, callsById: Map<string, ChatModelFunctionCall>): ChatModelResponse {
  const response: ChatModelResponse['response'] = [];
  if (message.reasoning)
    response.push({ type: 'segment', segmentType: 'thought', text: message.reasoning, ended: true });
  if (message.content) response.push(message.content);
  for (const toolCall of message.toolCalls ?? []) {
    const call: ChatModelFunctionCall = {
      type: 'functionCall',
      name: toolCall.name,
      params: parseArguments(toolCall.arguments),
      result: '',
    };
    callsById.set(toolCall.id, call);
    response.push(call);
  }
  return { type: 'model', response };
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
