import { Observable, type OperatorFunction } from 'rxjs';
import { openOnFirstEvent } from '../../streaming/open-on-first-event.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import type { SseFrame } from '../sse/sse-frame.js';
import { ChatStreamWriter, type ChatStreamOptions } from './chat-stream-writer.js';

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
      const writer = new ChatStreamWriter(options, (frame) => subscriber.next(frame));
      return source.subscribe(
        openOnFirstEvent(() => writer.open(), {
          next: (event) => writer.write(event),
          error: (error: unknown) => {
            writer.fail(error);
            subscriber.complete();
          },
          complete: () => {
            writer.end();
            subscriber.complete();
          },
        }),
      );
    });
}
