import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { NO_TIMINGS, type EngineEvent } from '../engine/engine-event.js';

/**
 * Leaves reasoning out of the events, for a client that is not to see it (`reasoningOutput:
 * hide`). A reasoning piece that carries the running counters gives them up as an ack: the
 * tokens were generated, and usage still counts them.
 */
export function hideReasoning(): MonoTypeOperatorFunction<EngineEvent> {
  return (source) =>
    new Observable<EngineEvent>((subscriber) =>
      source.subscribe({
        next: (event) => {
          if (event.type !== 'reasoning') subscriber.next(event);
          else if (event.usage !== undefined) subscriber.next({ type: 'ack', usage: event.usage, timings: event.timings ?? NO_TIMINGS });
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}
