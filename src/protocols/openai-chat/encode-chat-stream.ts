import { Observable, type OperatorFunction } from 'rxjs';
import type { DoneEvent, EngineEvent, OutputCounters, Timings, TokenUsage } from '../../engine/engine-event.js';
import { ZERO_USAGE } from '../../engine/engine-event.js';
import { asGatewayError } from '../../errors/gateway-error.js';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { toOpenAIErrorBody } from '../errors/openai-error.js';
import { flattenString } from '../sse/flatten-string.js';
import { DONE_FRAME, type SseFrame } from '../sse/sse-frame.js';
import { toChatFinishReason, toChatUsage } from './chat-usage.js';

const ROLE_CHOICES = '[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]';

export interface ChatStreamOptions {
  id: string;
  model: string;
  created: number;
  /** `stream_options.include_usage`: a final `choices: []` chunk with the whole usage. */
  includeUsage: boolean;
  /** `stream_options.continuous_usage_stats` (vLLM): usage so far on every chunk. */
  continuousUsage: boolean;
  /** `timings_per_token` (llama.cpp): the latest ack's timings on every chunk after it. */
  timings: boolean;
}

/**
 * Engine events (and heartbeats) to `chat.completion.chunk` frames.
 *
 * The role chunk leaves with the first stream event (the engine's acceptance, a heartbeat, or
 * whatever comes first; see openOnFirstEvent), before anything is measured: it carries no usage
 * or timings; `continuous_usage_stats` puts usage on every chunk after it, heartbeats included:
 * the latest counters, an ack's or an output piece's (which its own chunk shows). Every chunk
 * shares one id, model and created; the prefix holding them is serialized once per stream. A
 * failure after the stream opened becomes `data: {"error": ...}` followed by `[DONE]`, and the
 * stream ends cleanly.
 */
export function encodeChatStream(options: ChatStreamOptions): OperatorFunction<StreamEvent, SseFrame> {
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      const prefix =
        `{"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk",` +
        `"created":${options.created},"model":${JSON.stringify(options.model)},"choices":`;
      flattenString(prefix);
      let usage: TokenUsage = ZERO_USAGE;
      let timings: Timings | undefined;

      const chunk = (
        choices: string,
        chunkUsage: TokenUsage | undefined = options.continuousUsage ? usage : undefined,
      ) => {
        let data = prefix + choices;
        if (chunkUsage) data += `,"usage":${JSON.stringify(toChatUsage(chunkUsage))}`;
        if (options.timings && timings) data += `,"timings":${JSON.stringify(timings)}`;
        subscriber.next({ data: data + '}' });
      };
      const delta = (deltaJson: string) =>
        chunk(`[{"index":0,"delta":${deltaJson},"logprobs":null,"finish_reason":null}]`);

      const finish = (done: DoneEvent) => {
        usage = done.usage;
        chunk(`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${toChatFinishReason(done.finishReason)}"}]`);
        if (options.includeUsage) chunk('[]', usage);
      };

      // An ack's counters, or an output piece's (read before the piece is written, as an ack before it would be).
      const count = (counted: OutputCounters) => {
        if (counted.usage === undefined) return;
        usage = counted.usage;
        timings = counted.timings;
      };
      const onEvent = (event: StreamEvent) => {
        switch (event.type) {
          case 'ack':
            return count(event);
          case 'accepted':
          case 'resuming':
            return;
          case 'heartbeat':
            return chunk('[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}]');
          case 'text':
            count(event);
            return delta(`{"content":${JSON.stringify(event.text)}}`);
          case 'reasoning':
            count(event);
            return delta(`{"reasoning_content":${JSON.stringify(event.text)}}`);
          case 'tool_call':
            count(event);
            return delta(`{"tool_calls":[${JSON.stringify(toolCallDelta(event))}]}`);
          case 'done':
            return finish(event);
        }
      };

      // The role chunk precedes anything measured: no usage, whatever the stream options.
      const open = () => subscriber.next({ data: `${prefix}${ROLE_CHOICES}}` });
      return source.subscribe(
        openOnFirstEvent(open, {
          next: onEvent,
          error: (error: unknown) => {
            subscriber.next({ data: JSON.stringify(toOpenAIErrorBody(asGatewayError(error))) });
            subscriber.next(DONE_FRAME);
            subscriber.complete();
          },
          complete: () => {
            subscriber.next(DONE_FRAME);
            subscriber.complete();
          },
        }),
      );
    });
}

/** The first piece of a call carries id, type and name; later pieces only index and arguments. */
function toolCallDelta(event: Extract<EngineEvent, { type: 'tool_call' }>) {
  if (event.id === undefined && event.name === undefined) {
    return { index: event.index, function: { arguments: event.arguments } };
  }
  return {
    index: event.index,
    id: event.id,
    type: 'function',
    function: { name: event.name, arguments: event.arguments },
  };
}
