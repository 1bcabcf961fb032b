import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { Observable, type OperatorFunction } from 'rxjs';
import type { EngineEvent } from '../../engine/engine-event.js';
import { ChatChunkDecoder } from './chat-chunk-decoder.js';
import type { Redact } from './secret-redactor.js';

export interface UpstreamDecodeOptions {
  /** When the request began (on the `now` clock): measured prefill runs from it, across retries. */
  startedAt?: number;
  /** Applied to an in-band error's text before it may reach a client. */
  redact?: Redact;
  /** A continuation of answer text (see DecoderOptions). */
  continuesText?: boolean;
  /** Told of ignored usage counts (see DecoderOptions). */
  onBadUsage?: (message: string) => void;
}

/**
 * Upstream body text (pieces as they arrive, split anywhere) to engine events: a real SSE parser
 * (comments such as llama.cpp's `:` pings are dropped, events may span pieces), then
 * ChatChunkDecoder. It completes when the body ends, so a keep-alive connection is reused; the
 * first decoding failure errors the stream and stops reading.
 */
export function decodeUpstreamSse(
  now: () => number = () => performance.now(),
  { startedAt, redact, continuesText, onBadUsage }: UpstreamDecodeOptions = {},
): OperatorFunction<string, EngineEvent> {
  return (source) =>
    new Observable<EngineEvent>((subscriber) => {
      // Chunks that one read brings arrived together: the read's time is theirs (one clock read
      // per read, not one per chunk).
      let readAt: number | undefined;
      const clock = () => readAt ?? now();
      const decoder = new ChatChunkDecoder(clock, startedAt ?? clock(), { redact, continuesText, onBadUsage });
      // Made at the first piece of body: a stream waiting on a long prefill holds none.
      let parser: EventSourceParser | undefined;
      const onEvent = (message: EventSourceMessage) => {
        if (subscriber.closed) return;
        try {
          for (const event of decoder.decode(message.data)) subscriber.next(event);
        } catch (error) {
          subscriber.error(error);
        }
      };
      return source.subscribe({
        next: (text) => {
          readAt = now();
          try {
            (parser ??= createParser({ onEvent })).feed(text);
          } catch (error) {
            subscriber.error(error);
          } finally {
            readAt = undefined;
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          parser?.reset({ consume: true });
          if (subscriber.closed) return;
          try {
            for (const event of decoder.end()) subscriber.next(event);
            subscriber.complete();
          } catch (error) {
            subscriber.error(error);
          }
        },
      });
    });
}
