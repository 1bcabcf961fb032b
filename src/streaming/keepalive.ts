import {
  asyncScheduler,
  connect,
  defaultIfEmpty,
  filter,
  interval,
  map,
  merge,
  take,
  takeUntil,
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
 * `connect` subscribes the output check before the source starts, so a source that emits
 * synchronously cannot slip its first output past it.
 */
export function keepalive<T, B>(
  options: KeepaliveOptions<T, B>,
  scheduler: SchedulerLike = asyncScheduler,
): OperatorFunction<T, T | B> {
  return (source) =>
    source.pipe(
      connect((shared$) => {
        const outputOrEnd$ = shared$.pipe(filter(options.isOutput), defaultIfEmpty(null), take(1));
        const beats$ = interval(options.intervalMs, scheduler).pipe(
          map(options.beat),
          takeUntil(outputOrEnd$),
        );
        return merge(shared$, beats$);
      }),
    );
}
