import type { ReasoningSealer } from './reasoning-cipher.js';
import { customToolInput, type ClientTool } from './responses-tools.js';

/** Output items of a Response (responses/response_output_item.py), in a given state. */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** What a request asked of its reasoning items beyond the raw text. */
export interface ReasoningOutput {
  /** `reasoning.summary` was set: the text is also the item's summary. */
  summary: boolean;
  /** `include: ["reasoning.encrypted_content"]`: the text is also sealed into `encrypted_content`. */
  sealer?: ReasoningSealer;
}

export const PLAIN_REASONING: ReasoningOutput = Object.freeze({ summary: false });

export function reasoningItem(
  id: string,
  text: string | undefined,
  status: ItemStatus,
  output: ReasoningOutput = PLAIN_REASONING,
) {
  return {
    id,
    type: 'reasoning',
    summary: text !== undefined && output.summary ? [summaryPart(text)] : [],
    content: text === undefined ? [] : [reasoningPart(text)],
    ...(text !== undefined && output.sealer ? { encrypted_content: output.sealer.seal(text) } : {}),
    status,
  };
}

export function reasoningPart(text: string) {
  return { type: 'reasoning_text', text };
}

export function summaryPart(text: string) {
  return { type: 'summary_text', text };
}

export function messageItem(id: string, text: string | undefined, status: ItemStatus) {
  return { id, type: 'message', role: 'assistant', status, content: text === undefined ? [] : [outputTextPart(text)] };
}

export function outputTextPart(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  argumentsText: string,
  status: ItemStatus,
  namespace?: string,
) {
  return {
    id,
    type: 'function_call',
    call_id: callId,
    name,
    ...(namespace === undefined ? {} : { namespace }),
    arguments: argumentsText,
    status,
  };
}

export function customToolCallItem(
  id: string,
  callId: string,
  name: string,
  input: string,
  status: ItemStatus,
  namespace?: string,
) {
  return {
    id,
    type: 'custom_tool_call',
    call_id: callId,
    name,
    ...(namespace === undefined ? {} : { namespace }),
    input,
    status,
  };
}

/**
 * A call the model made, as the client's tool expects it: a `function_call`, or a
 * `custom_tool_call` whose input is taken out of the arguments; under the tool's own name and
 * namespace. A name the client never offered stays a function call under that name.
 */
export function toolCallItem(
  tool: ClientTool | undefined,
  id: string,
  callId: string,
  flatName: string,
  argumentsText: string,
  status: ItemStatus,
) {
  if (tool?.kind === 'custom')
    return customToolCallItem(id, callId, tool.name, customToolInput(argumentsText), status, tool.namespace);
  return functionCallItem(id, callId, tool?.name ?? flatName, argumentsText, status, tool?.namespace);
}

/** The item id prefix of a call to `tool`. */
export function toolCallIdPrefix(tool: ClientTool | undefined): string {
  return tool?.kind === 'custom' ? 'ctc_' : 'fc_';
}
