import { Observable } from 'rxjs';
import { asGatewayError, GatewayError } from '../errors/gateway-error.js';
import { toOpenAIErrorBody } from '../protocols/errors/openai-error.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { StoredEvent } from './response-store.js';

/** A kept event as the SSE frame it was. */
export function storedFrame(event: StoredEvent): SseFrame {
  return { event: event.event, data: event.data };
}

/** How a follower tells a run that its replica left (no event comes, and its lease ran out). */
export interface LeftRunCheck {
  /** Whether the run was left. */
  isLeft: () => Promise<boolean>;
  /** Quiet time after which to ask. */
  quietMs: number;
}

/**
 * A background response's kept and live events as SSE frames, from sequence `after + 1`. A
 * failure once the stream is open (the store went away, the events asked for were dropped, the
 * replica running it stopped) is a Responses `error` event, numbered next, and the end of the
 * stream: the client resumes later with `starting_after`, or reads the response.
 */
export function followedFrames(events$: Observable<StoredEvent>, after: number, left?: LeftRunCheck): Observable<SseFrame> {
  return new Observable<SseFrame>((subscriber) => {
    let last = after;
    let quiet: NodeJS.Timeout | undefined;
    const fail = (error: unknown) => {
      clearTimeout(quiet);
      const { error: body } = toOpenAIErrorBody(asGatewayError(error));
      const data = { type: 'error', sequence_number: last + 1, code: body.code, message: body.message, param: body.param };
      subscriber.next({ event: 'error', data: JSON.stringify(data) });
      subscriber.complete();
    };
    const watch = () => {
      if (left === undefined) return;
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        void left.isLeft().then((gone) => {
          if (subscriber.closed) return;
          if (!gone) return watch();
          fail(new GatewayError('upstream', 'The gateway replica running this response stopped before it finished.', { code: 'response_abandoned' }));
        });
      }, left.quietMs);
      quiet.unref();
    };
    const subscription = events$.subscribe({
      next: (event) => {
        last = event.sequence;
        watch();
        subscriber.next(storedFrame(event));
      },
      error: fail,
      complete: () => {
        clearTimeout(quiet);
        subscriber.complete();
      },
    });
    watch();
    return () => {
      clearTimeout(quiet);
      subscription.unsubscribe();
    };
  });
}
