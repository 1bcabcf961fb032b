import {
  asyncScheduler,
  defer,
  interval,
  map,
  merge,
  Subject,
  takeUntil,
  tap,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';

export interface KeepaliveOptions<T, B> {
  /** Time between beats; the first beat comes one interval after subscription. */
  intervalMs: number;
  /** What counts as output: the first value it accepts ends the beats for good. */
  isOutput: (value: T) => boolean;
  /** Makes the n-th beat (counting from 0). */
  beat: (n: number) => B;
}

/**
 * Interleaves beats with the source while nothing is flowing: one every `intervalMs` until the
 * first value that `isOutput` accepts, then none, even if the source pauses later. The beats end
 * when the source completes or fails, and unsubscribing tears down both.
 *
 * `merge` of the source and an `interval` of beats cut by `takeUntil`. The source is subscribed
 * once (it is cold: a second subscription would be a second engine request), and a `tap` on that
 * subscription raises the stop signal: lighter per stream than multicasting with `connect`. The
 * beats are subscribed first, so a source that emits output synchronously stops them before any.
 */
export function keepalive<T, B>(
  options: KeepaliveOptions<T, B>,
  scheduler: SchedulerLike = asyncScheduler,
): OperatorFunction<T, T | B> {
  return (source) =>
    defer(() => {
      const stop = new Subject<void>();
      const beats = interval(options.intervalMs, scheduler).pipe(
        map((n) => options.beat(n)),
        takeUntil(stop),
      );
      const values = source.pipe(
        tap({
          next: (value) => {
            // Once the beats have stopped nothing observes `stop`, and later values go unchecked.
            if (stop.observed && options.isOutput(value)) stop.next();
          },
          complete: () => stop.next(),
        }),
      );
      return merge(beats, values);
    });
}
