import { Observable, type OperatorFunction } from 'rxjs';
import type { DoneEvent, EngineEvent, TokenUsage } from '../../engine/engine-event.js';
import { countersOf, ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { newId } from '../ids.js';
import type { SseFrame } from '../sse/sse-frame.js';
import {
  messageItem,
  outputTextPart,
  reasoningItem,
  reasoningPart,
  summaryPart,
  toolCallIdPrefix,
  toolCallItem,
} from './response-items.js';
import { finalStatus, responseObject, type ResponseEnvelope } from './response-object.js';
import { customToolInput, type ClientTool } from './responses-tools.js';

type ToolCallItem = {
  kind: 'tool_call';
  outputIndex: number;
  id: string;
  callId: string;
  /** The name the model called, and the client's tool behind it (undefined: a name never offered). */
  name: string;
  tool: ClientTool | undefined;
  text: string;
};
type OpenItem =
  | { kind: 'reasoning'; outputIndex: number; id: string; text: string }
  | { kind: 'message'; outputIndex: number; id: string; text: string }
  | ToolCallItem;

/**
 * Engine events (and heartbeats) to Responses stream events, numbered by `sequence_number` from 0
 * with no gaps.
 *
 * `response.created` and `response.in_progress` leave with the first stream event (the engine's
 * acceptance, a heartbeat, or whatever comes first; see openOnFirstEvent); each heartbeat is another
 * full `response.in_progress` (same id, empty output) before the first output item, and the API's
 * `keepalive` event after it (a continuation's prefill): openai-node replaces its snapshot on every
 * lifecycle event, and knows `keepalive` as carrying no state; Codex and the AI SDK ignore both. Items open and close as the
 * output kind changes, with every `.done` event; the stream ends with `response.completed`,
 * `response.incomplete` (length) or `response.failed`, and no `[DONE]`.
 *
 * Reasoning streams as `reasoning_text`, and also as summary events when the request set
 * `reasoning.summary`. Tool calls come out under the client's names: a namespaced function's
 * call carries its `namespace`; a custom tool's call is a `custom_tool_call`, whose input (taken
 * out of the model's arguments) is sent in one delta when the call is whole.
 */
export function encodeResponsesStream(
  envelope: ResponseEnvelope,
  newItemId: (prefix: string) => string = newId,
): OperatorFunction<StreamEvent, SseFrame> {
  const summary = envelope.reasoning.summary;
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      let sequence = 0;
      let usage: TokenUsage = ZERO_USAGE;
      let open: OpenItem | undefined;
      const output: unknown[] = [];
      /** Each tool call's item, by the call's index; it outlives the item's `.done` (see onToolCall). */
      const calls = new Map<number, ToolCallItem>();
      const emit = (type: string, payload: Record<string, unknown>) =>
        subscriber.next({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...payload }) });

      const closeItem = () => {
        if (!open) return;
        const at = { item_id: open.id, output_index: open.outputIndex };
        let item: unknown;
        switch (open.kind) {
          case 'reasoning':
            emit('response.reasoning_text.done', { ...at, content_index: 0, text: open.text });
            emit('response.content_part.done', { ...at, content_index: 0, part: reasoningPart(open.text) });
            if (summary) {
              emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: open.text });
              emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: summaryPart(open.text) });
            }
            item = reasoningItem(open.id, open.text, 'completed', envelope.reasoning);
            break;
          case 'message':
            emit('response.output_text.done', { ...at, content_index: 0, text: open.text, logprobs: [] });
            emit('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(open.text) });
            item = messageItem(open.id, open.text, 'completed');
            break;
          case 'tool_call':
            if (open.tool?.kind === 'custom') {
              const input = customToolInput(open.text);
              if (input.length > 0) emit('response.custom_tool_call_input.delta', { ...at, delta: input });
              emit('response.custom_tool_call_input.done', { ...at, input });
            } else {
              emit('response.function_call_arguments.done', {
                ...at,
                arguments: open.text,
                name: open.tool?.name ?? open.name,
              });
            }
            item = toolCallItem(open.tool, open.id, open.callId, open.name, open.text, 'completed');
            break;
        }
        output[open.outputIndex] = item;
        emit('response.output_item.done', { output_index: open.outputIndex, item });
        open = undefined;
      };

      const openItem = (next: OpenItem, item: unknown, part?: unknown) => {
        closeItem();
        open = next;
        output[next.outputIndex] = item;
        emit('response.output_item.added', { output_index: next.outputIndex, item });
        if (part !== undefined) {
          emit('response.content_part.added', {
            item_id: next.id,
            output_index: next.outputIndex,
            content_index: 0,
            part,
          });
        }
      };

      const onToolCall = (event: Extract<EngineEvent, { type: 'tool_call' }>) => {
        let item = calls.get(event.index);
        if (item === undefined) {
          const name = event.name ?? '';
          const tool = envelope.tools.get(name);
          const id = newItemId(toolCallIdPrefix(tool));
          const callId = event.id ?? newItemId('call_');
          item = { kind: 'tool_call', outputIndex: output.length, id, callId, name, tool, text: '' };
          calls.set(event.index, item);
          openItem(item, toolCallItem(tool, id, callId, name, '', 'in_progress'));
        }
        if (event.arguments.length === 0) return;
        item.text += event.arguments;
        if (item.tool?.kind !== 'custom') {
          emit('response.function_call_arguments.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            delta: event.arguments,
          });
        }
        // A piece of a call whose item was already closed (an upstream that interleaves calls):
        // the final response carries the whole arguments all the same.
        if (open !== item)
          output[item.outputIndex] = toolCallItem(item.tool, item.id, item.callId, item.name, item.text, 'completed');
      };

      const onReasoning = (text: string) => {
        if (open?.kind !== 'reasoning') {
          const id = newItemId('rs_');
          openItem(
            { kind: 'reasoning', outputIndex: output.length, id, text: '' },
            reasoningItem(id, undefined, 'in_progress'),
            reasoningPart(''),
          );
          if (summary)
            emit('response.reasoning_summary_part.added', {
              item_id: id,
              output_index: open!.outputIndex,
              summary_index: 0,
              part: summaryPart(''),
            });
        }
        const item = open as Extract<OpenItem, { kind: 'reasoning' }>;
        item.text += text;
        const at = { item_id: item.id, output_index: item.outputIndex };
        emit('response.reasoning_text.delta', { ...at, content_index: 0, delta: text });
        if (summary) emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: text });
      };

      const onEvent = (event: StreamEvent) => {
        if (event.type === 'heartbeat') {
          // Once output began (a continuation's prefill), the API's own `keepalive`: openai-node's
          // accumulator replaces its snapshot on `response.in_progress`, which has no open item's text.
          if (output.length > 0) return emit('keepalive', {});
          return emit('response.in_progress', { response: responseObject(envelope, 'in_progress', [...output]) });
        }
        // The latest counters (an ack's, or an output piece's): what a failed response reports.
        usage = countersOf(event)?.usage ?? usage;
        switch (event.type) {
          case 'ack':
          case 'accepted':
          case 'resuming':
            return;
          case 'reasoning':
            if (event.text.length > 0) onReasoning(event.text);
            return;
          case 'text': {
            if (event.text.length === 0) return;
            if (open?.kind !== 'message') {
              const id = newItemId('msg_');
              openItem(
                { kind: 'message', outputIndex: output.length, id, text: '' },
                messageItem(id, undefined, 'in_progress'),
                outputTextPart(''),
              );
            }
            const item = open as Extract<OpenItem, { kind: 'message' }>;
            item.text += event.text;
            return emit('response.output_text.delta', {
              item_id: item.id,
              output_index: item.outputIndex,
              content_index: 0,
              delta: event.text,
              logprobs: [],
            });
          }
          case 'tool_call':
            return onToolCall(event);
          case 'done':
            return finish(event);
        }
      };

      const finish = (done: DoneEvent) => {
        closeItem();
        usage = done.usage;
        const status = finalStatus(done.finishReason);
        emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
          response: responseObject(envelope, status, [...output], { usage, finishReason: done.finishReason }),
        });
      };

      const start = () => {
        const initial = responseObject(envelope, 'in_progress', []);
        emit('response.created', { response: initial });
        emit('response.in_progress', { response: initial });
      };
      return source.subscribe(
        openOnFirstEvent(start, {
          next: onEvent,
          error: (error: unknown) => {
            // What was already streamed stays in the output (openai-node replaces its snapshot with it).
            if (open) output[open.outputIndex] = partialItem(open, envelope);
            emit('response.failed', {
              response: responseObject(envelope, 'failed', [...output], { usage, error: asGatewayError(error) }),
            });
            subscriber.complete();
          },
          complete: () => subscriber.complete(),
        }),
      );
    });
}

/** An item cut short by a failure, holding what was streamed of it. */
function partialItem(item: OpenItem, envelope: ResponseEnvelope): unknown {
  switch (item.kind) {
    case 'reasoning':
      return reasoningItem(item.id, item.text, 'incomplete', envelope.reasoning);
    case 'message':
      return messageItem(item.id, item.text, 'incomplete');
    case 'tool_call':
      return toolCallItem(item.tool, item.id, item.callId, item.name, item.text, 'incomplete');
  }
}
