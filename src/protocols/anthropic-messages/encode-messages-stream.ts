import { Observable, type OperatorFunction } from 'rxjs';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import type { SseFrame } from '../sse/sse-frame.js';
import { MessagesStreamWriter, type MessagesStreamOptions } from './messages-stream-writer.js';

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
      const writer = new MessagesStreamWriter(options, (frame) => subscriber.next(frame));
      return source.subscribe(
        openOnFirstEvent((first) => writer.start(first), {
          next: (event) => writer.write(event),
          error: (error: unknown) => {
            writer.fail(error);
            subscriber.complete();
          },
          complete: () => subscriber.complete(),
        }),
      );
    });
}
