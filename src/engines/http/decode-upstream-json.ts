import { Observable, type OperatorFunction } from 'rxjs';
import type { EngineEvent } from '../../engine/engine-event.js';
import { ChatChunkDecoder, parseUpstreamPayload } from './chat-chunk-decoder.js';
import type { UpstreamDecodeOptions } from './decode-upstream-sse.js';
import type { UpstreamChunk } from './upstream-chunk.js';

/**
 * An upstream's whole `chat.completion` answer (body text, in pieces) to engine events, for a
 * non-streaming client: the answer is read as one chunk whose delta is the message, so it goes
 * through the same ChatChunkDecoder as a stream (reasoning under either name, tool calls, usage,
 * finish reason, in-band errors), then ends as `[DONE]` would. Nothing is emitted before the body
 * ended, so a failed attempt can still be retried on another replica.
 */
export function decodeUpstreamJson(
  now: () => number = () => performance.now(),
  { startedAt, redact, onBadUsage }: UpstreamDecodeOptions = {},
): OperatorFunction<string, EngineEvent> {
  return (source) =>
    new Observable<EngineEvent>((subscriber) => {
      const decoder = new ChatChunkDecoder(now, startedAt ?? now(), { whole: true, redact, onBadUsage });
      let body = '';
      return source.subscribe({
        next: (text) => {
          body += text;
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          let events: EngineEvent[];
          try {
            events = [
              ...decoder.decodeChunk(asChunk(parseUpstreamPayload(body, 'JSON answer'))),
              ...decoder.decode('[DONE]'),
            ];
          } catch (error) {
            subscriber.error(error);
            return;
          }
          for (const event of events) subscriber.next(event);
          subscriber.complete();
        },
      });
    });
}

/** The answer as a chunk: each choice's message becomes its delta; tool calls get their index. */
function asChunk(answer: UpstreamChunk): UpstreamChunk {
  if (!answer.choices) return answer;
  return {
    ...answer,
    choices: answer.choices.map((choice) => {
      const message = choice.message;
      if (!message) return choice;
      const toolCalls = message.tool_calls?.map((call, index) => ({ ...call, index: call.index ?? index }));
      return { ...choice, delta: { ...message, tool_calls: toolCalls } };
    }),
  };
}
