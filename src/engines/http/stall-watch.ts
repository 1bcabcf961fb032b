import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * Errors with `stalled()` when the source, once it emitted, stays silent for `timeoutMs`. Before
 * the first value nothing is watched: an upstream's prefill is silent by nature and has its own
 * timeout. One timer per silence, not one per value: each value only notes its time, and the
 * timer, when it fires early, waits out the rest of the window from the latest value.
 */
export function stallWatch<T>(
  timeoutMs: number,
  stalled: () => Error,
  scheduler: SchedulerLike = asyncScheduler,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let lastAt = 0;
      let timer: Subscription | undefined;
      const check = () => {
        const silentMs = scheduler.now() - lastAt;
        if (silentMs >= timeoutMs) subscriber.error(stalled());
        else timer = scheduler.schedule(check, timeoutMs - silentMs);
      };
      const upstream = source.subscribe({
        next: (value) => {
          lastAt = scheduler.now();
          timer ??= scheduler.schedule(check, timeoutMs);
          subscriber.next(value);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        upstream.unsubscribe();
      };
    });
}
