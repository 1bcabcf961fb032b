import { Observable, type OperatorFunction } from 'rxjs';
import type { DoneEvent, EngineEvent, TokenUsage } from '../../engine/engine-event.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { newId } from '../ids.js';
import type { SseFrame } from '../sse/sse-frame.js';
import {
  functionCallItem,
  messageItem,
  outputTextPart,
  reasoningItem,
  reasoningPart,
} from './response-items.js';
import { finalStatus, responseObject, type ResponseEnvelope } from './response-object.js';

type OpenItem =
  | { kind: 'reasoning'; outputIndex: number; id: string; text: string }
  | { kind: 'message'; outputIndex: number; id: string; text: string }
  | { kind: 'function_call'; outputIndex: number; id: string; toolIndex: number; callId: string; name: string; text: string };

/**
 * Engine events (and heartbeats) to Responses stream events, numbered by `sequence_number` from 0
 * with no gaps.
 *
 * `response.created` and `response.in_progress` leave on subscription; each heartbeat is another
 * full `response.in_progress` (same id, empty output: beats stop before the first output item,
 * because openai-node replaces its snapshot on every lifecycle event). Items open and close as the
 * output kind changes, with every `.done` event; the stream ends with `response.completed`,
 * `response.incomplete` (length) or `response.failed`, and no `[DONE]`.
 */
export function encodeResponsesStream(
  envelope: ResponseEnvelope,
  newItemId: (prefix: string) => string = newId,
): OperatorFunction<StreamEvent, SseFrame> {
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      let sequence = 0;
      let usage: TokenUsage = ZERO_USAGE;
      let open: OpenItem | undefined;
      const output: unknown[] = [];
      /** Each tool call's item, by the call's index; it outlives the item's `.done` (see onToolCall). */
      const calls = new Map<number, Extract<OpenItem, { kind: 'function_call' }>>();
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
            item = reasoningItem(open.id, open.text, 'completed');
            break;
          case 'message':
            emit('response.output_text.done', { ...at, content_index: 0, text: open.text, logprobs: [] });
            emit('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(open.text) });
            item = messageItem(open.id, open.text, 'completed');
            break;
          case 'function_call':
            emit('response.function_call_arguments.done', { ...at, arguments: open.text, name: open.name });
            item = functionCallItem(open.id, open.callId, open.name, open.text, 'completed');
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
          emit('response.content_part.added', { item_id: next.id, output_index: next.outputIndex, content_index: 0, part });
        }
      };

      const onToolCall = (event: Extract<EngineEvent, { type: 'tool_call' }>) => {
        let item = calls.get(event.index);
        if (item === undefined) {
          const id = newItemId('fc_');
          const callId = event.id ?? newItemId('call_');
          const name = event.name ?? '';
          item = { kind: 'function_call', outputIndex: output.length, id, toolIndex: event.index, callId, name, text: '' };
          calls.set(event.index, item);
          openItem(item, functionCallItem(id, callId, name, '', 'in_progress'));
        }
        if (event.arguments.length === 0) return;
        item.text += event.arguments;
        emit('response.function_call_arguments.delta', { item_id: item.id, output_index: item.outputIndex, delta: event.arguments });
        // A piece of a call whose item was already closed (an upstream that interleaves calls):
        // the final response carries the whole arguments all the same.
        if (open !== item) output[item.outputIndex] = functionCallItem(item.id, item.callId, item.name, item.text, 'completed');
      };

      const onEvent = (event: StreamEvent) => {
        switch (event.type) {
          case 'ack':
            usage = event.usage;
            return;
          case 'heartbeat':
            return emit('response.in_progress', { response: responseObject(envelope, 'in_progress', [...output]) });
          case 'reasoning': {
            if (event.text.length === 0) return;
            if (open?.kind !== 'reasoning') {
              const id = newItemId('rs_');
              openItem({ kind: 'reasoning', outputIndex: output.length, id, text: '' }, reasoningItem(id, undefined, 'in_progress'), reasoningPart(''));
            }
            const item = open as Extract<OpenItem, { kind: 'reasoning' }>;
            item.text += event.text;
            return emit('response.reasoning_text.delta', { item_id: item.id, output_index: item.outputIndex, content_index: 0, delta: event.text });
          }
          case 'text': {
            if (event.text.length === 0) return;
            if (open?.kind !== 'message') {
              const id = newItemId('msg_');
              openItem({ kind: 'message', outputIndex: output.length, id, text: '' }, messageItem(id, undefined, 'in_progress'), outputTextPart(''));
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

      const initial = responseObject(envelope, 'in_progress', []);
      emit('response.created', { response: initial });
      emit('response.in_progress', { response: initial });
      return source.subscribe({
        next: onEvent,
        error: (error: unknown) => {
          // What was already streamed stays in the output (openai-node replaces its snapshot with it).
          if (open) output[open.outputIndex] = partialItem(open);
          emit('response.failed', { response: responseObject(envelope, 'failed', [...output], { usage, error: asGatewayError(error) }) });
          subscriber.complete();
        },
        complete: () => subscriber.complete(),
      });
    });
}

/** An item cut short by a failure, holding what was streamed of it. */
function partialItem(item: OpenItem): unknown {
  switch (item.kind) {
    case 'reasoning':
      return reasoningItem(item.id, item.text, 'incomplete');
    case 'message':
      return messageItem(item.id, item.text, 'incomplete');
    case 'function_call':
      return functionCallItem(item.id, item.callId, item.name, item.text, 'incomplete');
  }
}
