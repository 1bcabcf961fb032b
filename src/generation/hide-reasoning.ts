import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { countersAsAck, type EngineEvent } from '../engine/engine-event.js';

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
          if (event.type !== 'reasoning') return subscriber.next(event);
          const ack = countersAsAck(event);
          if (ack !== undefined) subscriber.next(ack);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}
