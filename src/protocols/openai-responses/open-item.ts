import {
  messageItem,
  outputTextPart,
  reasoningItem,
  reasoningPart,
  summaryPart,
  toolCallItem,
} from './response-items.js';
import type { ResponseEnvelope } from './response-object.js';
import { customToolInput, type ClientTool } from './responses-tools.js';

/** A tool call's output item as it streams; it outlives its `.done` (an upstream may interleave calls). */
export type ToolCallItem = {
  kind: 'tool_call';
  outputIndex: number;
  id: string;
  callId: string;
  /** The name the model called, and the client's tool behind it (undefined: a name never offered). */
  name: string;
  tool: ClientTool | undefined;
  text: string;
};

/** The output item a Responses stream is writing: the text so far, where it sits in `output`. */
export type OpenItem =
  | { kind: 'reasoning'; outputIndex: number; id: string; text: string }
  | { kind: 'message'; outputIndex: number; id: string; text: string }
  | ToolCallItem;

/** A stream event to send: its type and its payload (without the sequence number). */
export type ItemEvent = [type: string, payload: Record<string, unknown>];

/** The `.done` events that close an item, and the item as the response holds it, completed. */
export function closeItem(open: OpenItem, envelope: ResponseEnvelope): { events: ItemEvent[]; item: unknown } {
  switch (open.kind) {
    case 'reasoning':
      return closeReasoning(open, envelope);
    case 'message':
      return closeMessage(open);
    case 'tool_call':
      return closeToolCall(open);
  }
}

function closeReasoning(open: Extract<OpenItem, { kind: 'reasoning' }>, envelope: ResponseEnvelope) {
  const at = { item_id: open.id, output_index: open.outputIndex };
  const events: ItemEvent[] = [
    ['response.reasoning_text.done', { ...at, content_index: 0, text: open.text }],
    ['response.content_part.done', { ...at, content_index: 0, part: reasoningPart(open.text) }],
  ];
  if (envelope.reasoning.summary) {
    events.push(
      ['response.reasoning_summary_text.done', { ...at, summary_index: 0, text: open.text }],
      ['response.reasoning_summary_part.done', { ...at, summary_index: 0, part: summaryPart(open.text) }],
    );
  }
  return { events, item: reasoningItem(open.id, open.text, 'completed', envelope.reasoning) };
}

function closeMessage(open: Extract<OpenItem, { kind: 'message' }>) {
  const at = { item_id: open.id, output_index: open.outputIndex };
  const events: ItemEvent[] = [
    ['response.output_text.done', { ...at, content_index: 0, text: open.text, logprobs: [] }],
    ['response.content_part.done', { ...at, content_index: 0, part: outputTextPart(open.text) }],
  ];
  return { events, item: messageItem(open.id, open.text, 'completed') };
}

/** A custom tool's input is sent in one delta, when the call is whole (taken out of the model's arguments). */
function closeToolCall(open: ToolCallItem) {
  const at = { item_id: open.id, output_index: open.outputIndex };
  const events: ItemEvent[] = [];
  if (open.tool?.kind === 'custom') {
    const input = customToolInput(open.text);
    if (input.length > 0) events.push(['response.custom_tool_call_input.delta', { ...at, delta: input }]);
    events.push(['response.custom_tool_call_input.done', { ...at, input }]);
  } else {
    events.push([
      'response.function_call_arguments.done',
      { ...at, arguments: open.text, name: open.tool?.name ?? open.name },
    ]);
  }
  return { events, item: toolCallItem(open.tool, open.id, open.callId, open.name, open.text, 'completed') };
}

/** An item cut short by a failure, holding what was streamed of it. */
export function partialItem(item: OpenItem, envelope: ResponseEnvelope): unknown {
  switch (item.kind) {
    case 'reasoning':
      return reasoningItem(item.id, item.text, 'incomplete', envelope.reasoning);
    case 'message':
      return messageItem(item.id, item.text, 'incomplete');
    case 'tool_call':
      return toolCallItem(item.tool, item.id, item.callId, item.name, item.text, 'incomplete');
  }
}
