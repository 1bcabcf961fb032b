import {
  asyncScheduler,
  BehaviorSubject,
  defer,
  EMPTY,
  interval,
  map,
  merge,
  Subject,
  switchMap,
  takeUntil,
  tap,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';

export interface KeepaliveOptions<T, B> {
  /** Time between beats; the first beat comes one interval after subscription. */
  intervalMs: number;
  /** What counts as output: the first value it accepts stops the beats. */
  isOutput: (value: T) => boolean;
  /**
   * What starts them again after output, until the next output (a continuation's new prefill);
   * absent: nothing does, and once output began no value is checked again.
   */
  isPause?: (value: T) => boolean;
  /** Makes the n-th beat (counting from 0, across pauses). */
  beat: (n: number) => B;
}

/**
 * Interleaves beats with the source while nothing is flowing: one every `intervalMs` until the
 * first value that `isOutput` accepts, then none until a value that `isPause` accepts, which
 * starts them again (a fresh interval) until the next output. The beats end when the source
 * completes or fails, and unsubscribing tears down both.
 *
 * `merge` of the source and the beats: a `BehaviorSubject` of whether to beat, `switchMap`ped to
 * an `interval` or to nothing, cut by `takeUntil` at the source's end. The source is subscribed
 * once (it is cold: a second subscription would be a second engine request), and a `tap` on that
 * subscription switches the beats: lighter per stream than multicasting with `connect`. The
 * beats are subscribed first, so a source that emits output synchronously stops them before any.
 */
export function keepalive<T, B>(
  options: KeepaliveOptions<T, B>,
  scheduler: SchedulerLike = asyncScheduler,
): OperatorFunction<T, T | B> {
  const { intervalMs, isOutput, isPause, beat } = options;
  return (source) =>
    defer(() => {
      const beating = new BehaviorSubject(true);
      const end = new Subject<void>();
      let sent = 0;
      const beats = beating.pipe(
        switchMap((on) => (on ? interval(intervalMs, scheduler) : EMPTY)),
        map(() => beat(sent++)),
        takeUntil(end),
      );
      const values = source.pipe(
        tap({
          next: (value) => {
            if (beating.value) {
              if (isOutput(value)) beating.next(false);
            } else if (isPause?.(value)) {
              beating.next(true);
            }
          },
          complete: () => end.next(),
        }),
      );
      return merge(beats, values);
    });
}
