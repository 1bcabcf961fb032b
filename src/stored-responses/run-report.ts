import { Observable, type Subscriber } from 'rxjs';
import { countersAsAck, type EngineEvent, isOutput } from '../engine/engine-event.js';

/** Output events kept for a run's reporting before anyone subscribed to it (the route subscribes at once). */
export const MAX_UNREPORTED = 1024;

/**
 * A background run's engine events for its request's GenerationHooks (and its telemetry, which the
 * pipeline folds them into): passed on as they come once someone listens, kept until then;
 * ended when the run's events end, or when it is cancelled. Past the bound, early output events
 * are dropped, but the latest other event (usage, the finish) is kept, the counters of a dropped
 * piece as an ack, so the request still ends with its finish reason and usage.
 */
export class RunReport {
  private listener?: Subscriber<EngineEvent>;
  private early: EngineEvent[] = [];
  /** The latest event that is not output, once `early` is full. */
  private lateState?: EngineEvent;
  private ending?: { error?: unknown };

  readonly events$ = new Observable<EngineEvent>((subscriber) => {
    for (const event of this.early) subscriber.next(event);
    if (this.lateState !== undefined) subscriber.next(this.lateState);
    this.early = [];
    this.lateState = undefined;
    if (this.ending !== undefined) {
      if ('error' in this.ending) subscriber.error(this.ending.error);
      else subscriber.complete();
      return;
    }
    this.listener = subscriber;
    return () => {
      this.listener = undefined;
    };
  });

  tap(events$: Observable<EngineEvent>): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) =>
      events$.subscribe({
        next: (event) => {
          if (this.listener) this.listener.next(event);
          else this.keep(event);
          subscriber.next(event);
        },
        error: (error: unknown) => {
          this.end({ error });
          subscriber.error(error);
        },
        complete: () => {
          this.end();
          subscriber.complete();
        },
      }),
    );
  }

  end(ending: { error?: unknown } = {}): void {
    if (this.ending !== undefined) return;
    this.ending = ending;
    if (this.listener === undefined) return;
    if ('error' in ending) this.listener.error(ending.error);
    else this.listener.complete();
  }

  private keep(event: EngineEvent): void {
    if (this.early.length < MAX_UNREPORTED) this.early.push(event);
    else if (!isOutput(event)) this.lateState = event;
    else {
      // An output piece dropped here keeps its counters, as the ack they stand for.
      this.lateState = countersAsAck(event) ?? this.lateState;
    }
  }
}
