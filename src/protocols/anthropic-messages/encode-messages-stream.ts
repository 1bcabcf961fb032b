import { Observable, type OperatorFunction } from 'rxjs';
import type { DoneEvent } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { toAnthropicErrorBody } from '../errors/anthropic-error.js';
import type { SseFrame } from '../sse/sse-frame.js';
import {
  anthropicUsage,
  thinkingSignature,
  toAnthropicInput,
  toAnthropicStopReason,
  type AnthropicInputUsage,
} from './anthropic-usage.js';
import { toAnthropicToolUseId } from './tool-use-id.js';

export interface MessagesStreamOptions {
  id: string;
  model: string;
  /**
   * The prompt's tokens, counted before the stream opened: `message_start` carries them, as
   * Anthropic's does, unless the engine's first event brings its own split into fresh and cached.
   */
  inputTokens: number;
}

type OpenBlock =
  | { kind: 'thinking'; index: number; text: string }
  | { kind: 'text'; index: number }
  | { kind: 'tool_use'; index: number; toolIndex: number };

const PING: SseFrame = Object.freeze({ event: 'ping', data: '{"type":"ping"}' });

/**
 * Engine events (and heartbeats) to Anthropic Messages stream events.
 *
 * `message_start` leaves with the first stream event (the engine's acceptance, a heartbeat, or
 * whatever comes first; see openOnFirstEvent) with the prompt's input tokens: the engine's split
 * into fresh and cached tokens when its acceptance comes first and brings one, else the count
 * made before the stream. Clients read them from different events (LangChain from
 * `message_start`, the SDKs' accumulators from `message_delta`), so `message_delta` repeats them.
 * Heartbeats are `ping`s. Tool-use ids are Anthropic-shaped (see tool-use-id.ts). Deltas open content
 * blocks as their kind changes (thinking, text, one block per tool call); a thinking block gets
 * a `signature_delta` before it stops. The stream ends with `message_delta` (stop reason,
 * cumulative usage) and `message_stop`, or with `event: error` and nothing after it.
 */
export function encodeMessagesStream(options: MessagesStreamOptions): OperatorFunction<StreamEvent, SseFrame> {
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      let input: AnthropicInputUsage = { input_tokens: options.inputTokens };
      let open: OpenBlock | undefined;
      let nextIndex = 0;
      /** The block of each tool call, by the call's index. */
      const toolBlocks = new Map<number, number>();
      const emit = (event: string, payload: Record<string, unknown>) =>
        subscriber.next({ event, data: JSON.stringify({ type: event, ...payload }) });

      const closeBlock = () => {
        if (!open) return;
        if (open.kind === 'thinking') {
          emit('content_block_delta', {
            index: open.index,
            delta: { type: 'signature_delta', signature: thinkingSignature(open.text) },
          });
        }
        emit('content_block_stop', { index: open.index });
        open = undefined;
      };
      const openBlock = (block: OpenBlock, contentBlock: Record<string, unknown>) => {
        closeBlock();
        open = block;
        emit('content_block_start', { index: block.index, content_block: contentBlock });
      };

      const onEvent = (event: StreamEvent) => {
        switch (event.type) {
          case 'accepted':
          case 'resuming':
          case 'ack':
            return;
          case 'heartbeat':
            return subscriber.next(PING);
          case 'reasoning':
            if (event.text.length === 0) return;
            if (open?.kind !== 'thinking')
              openBlock(
                { kind: 'thinking', index: nextIndex++, text: '' },
                { type: 'thinking', thinking: '', signature: '' },
              );
            (open as { text: string }).text += event.text;
            return emit('content_block_delta', {
              index: open!.index,
              delta: { type: 'thinking_delta', thinking: event.text },
            });
          case 'text':
            if (event.text.length === 0) return;
            if (open?.kind !== 'text') openBlock({ kind: 'text', index: nextIndex++ }, { type: 'text', text: '' });
            return emit('content_block_delta', { index: open!.index, delta: { type: 'text_delta', text: event.text } });
          case 'tool_call': {
            let blockIndex = toolBlocks.get(event.index);
            if (blockIndex === undefined) {
              blockIndex = nextIndex++;
              toolBlocks.set(event.index, blockIndex);
              openBlock(
                { kind: 'tool_use', index: blockIndex, toolIndex: event.index },
                {
                  type: 'tool_use',
                  id: toAnthropicToolUseId(event.id ?? `${options.id}_${event.index}`),
                  name: event.name ?? '',
                  input: {},
                },
              );
            }
            // A piece of an earlier call (an upstream that interleaves calls) still goes to that
            // call's block, which the SDKs accumulate by index.
            if (event.arguments.length === 0) return;
            return emit('content_block_delta', {
              index: blockIndex,
              delta: { type: 'input_json_delta', partial_json: event.arguments },
            });
          }
          case 'done':
            return finish(event);
        }
      };

      const finish = (done: DoneEvent) => {
        closeBlock();
        emit('message_delta', {
          delta: {
            stop_reason: toAnthropicStopReason(done.finishReason, done.stopSequence),
            stop_sequence: done.stopSequence ?? null,
          },
          usage: anthropicUsage(input, done.usage.completionTokens),
        });
        emit('message_stop', {});
      };

      const start = (first: StreamEvent | undefined) => {
        const split = first?.type === 'accepted' ? first.usage : undefined;
        if (split !== undefined) input = toAnthropicInput(split);
        emit('message_start', {
          message: {
            id: options.id,
            type: 'message',
            role: 'assistant',
            model: options.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: anthropicUsage(input, 0),
          },
        });
      };
      return source.subscribe(
        openOnFirstEvent(start, {
          next: onEvent,
          error: (error: unknown) => {
            subscriber.next({ event: 'error', data: JSON.stringify(toAnthropicErrorBody(asGatewayError(error))) });
            subscriber.complete();
          },
          complete: () => subscriber.complete(),
        }),
      );
    });
}
