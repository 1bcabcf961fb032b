import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * Errors with `stalled()` when the source, once it made progress, makes none for `timeoutMs`.
 * `progress` (made per subscription: it may keep state) says which values are progress; the rest
 * pass through without resetting the watch, so a source that drips keep-alives is still caught.
 * Before the first progress nothing is watched: an upstream's prefill is silent by nature and has
 * its own timeout. One timer per silence, not one per value: progress only notes its time, and
 * the timer, when it fires early, waits out the rest of the window from the latest progress.
 */
export function stallWatch<T>(
  timeoutMs: number,
  stalled: () => Error,
  progress: () => (value: T) => boolean = () => () => true,
  scheduler: SchedulerLike = asyncScheduler,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const isProgress = progress();
      let lastAt = 0;
      let timer: Subscription | undefined;
      const check = () => {
        const silentMs = scheduler.now() - lastAt;
        if (silentMs >= timeoutMs) subscriber.error(stalled());
        else timer = scheduler.schedule(check, timeoutMs - silentMs);
      };
      const upstream = source.subscribe({
        next: (value) => {
          if (isProgress(value)) {
            lastAt = scheduler.now();
            timer ??= scheduler.schedule(check, timeoutMs);
          }
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
