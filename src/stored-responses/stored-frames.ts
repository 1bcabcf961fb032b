import { Observable } from 'rxjs';
import { asGatewayError, GatewayError } from '../errors/gateway-error.js';
import { toOpenAIErrorBody } from '../protocols/errors/openai-error.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { StoredEvent } from './response-store.js';

/** A kept event as the SSE frame it was. */
export function storedFrame(event: StoredEvent): SseFrame {
  return { event: event.event, data: event.data };
}

/** The error of a run whose replica stopped before it finished (its response turns `failed` with it). */
export const LEFT_BEHIND = 'The gateway replica running this response stopped before it finished.';

const SHUTTING_DOWN = 'Gantry is shutting down; resume these events (starting_after) on another replica.';

/** How a follower tells a run that its replica left (no event comes, and its lease ran out). */
export interface LeftRunCheck {
  /** Whether the run was left. */
  isLeft: () => Promise<boolean>;
  /** Quiet time after which to ask. */
  quietMs: number;
}

/** When a follower stops for a shutdown. */
export interface FollowerCutoff {
  /** Errors at the drain deadline (LifecycleService.endAtDrainDeadline). */
  deadline$: Observable<never>;
  /** How long after it the run's last events may take to arrive (a run here is cut at the same deadline). */
  graceMs: number;
}

/**
 * A background response's kept and live events as SSE frames, from sequence `after + 1`. A
 * failure once the stream is open (the store went away, the events asked for were dropped, the
 * replica running it stopped) is a Responses `error` event, numbered next, and the end of the
 * stream: the client resumes later with `starting_after`, or reads the response. At a
 * shutdown's drain deadline the run's own end (a run cut there ends `response.failed`) still
 * comes through; a follower of a run that goes on elsewhere gets an `error` event after `graceMs`.
 */
export function followedFrames(
  events$: Observable<StoredEvent>,
  after: number,
  left?: LeftRunCheck,
  cutoff?: FollowerCutoff,
): Observable<SseFrame> {
  return new Observable<SseFrame>((subscriber) => {
    let last = after;
    // One timer per follower, pushed back by each event (refresh), not one per event.
    let quiet: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    const fail = (error: unknown) => {
      clearTimeout(quiet);
      clearTimeout(grace);
      const { error: body } = toOpenAIErrorBody(asGatewayError(error));
      const data = {
        type: 'error',
        sequence_number: last + 1,
        code: body.code,
        message: body.message,
        param: body.param,
      };
      subscriber.next({ event: 'error', data: JSON.stringify(data) });
      subscriber.complete();
    };
    if (left !== undefined) {
      const check = () =>
        void left.isLeft().then((gone) => {
          if (subscriber.closed) return;
          if (gone) fail(new GatewayError('upstream', LEFT_BEHIND, { code: 'response_abandoned' }));
          else quiet?.refresh();
        });
      quiet = setTimeout(check, left.quietMs);
      quiet.unref();
    }
    const subscription = events$.subscribe({
      next: (event) => {
        last = event.sequence;
        quiet?.refresh();
        subscriber.next(storedFrame(event));
      },
      error: fail,
      complete: () => {
        clearTimeout(quiet);
        clearTimeout(grace);
        subscriber.complete();
      },
    });
    const cut = cutoff?.deadline$.subscribe({
      error: () => {
        grace = setTimeout(
          () => fail(new GatewayError('unavailable', SHUTTING_DOWN, { code: 'shutting_down' })),
          cutoff.graceMs,
        );
      },
    });
    return () => {
      clearTimeout(quiet);
      clearTimeout(grace);
      cut?.unsubscribe();
      subscription.unsubscribe();
    };
  });
}
