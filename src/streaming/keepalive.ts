import { asyncScheduler, Observable, type OperatorFunction, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';

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
 * One subscriber and one rescheduled action per stream (as `interval` would use), rather than a
 * composition of `connect`, `interval`, `takeUntil` and `merge`: a gateway holds thousands of
 * these at once, each in a long prefill, and every operator in a chain costs memory per stream.
 * The beat timer is armed before the source is subscribed, so a source that emits its first
 * output synchronously cancels it before any beat.
 */
export function keepalive<T, B>(
  options: KeepaliveOptions<T, B>,
  scheduler: SchedulerLike = asyncScheduler,
): OperatorFunction<T, T | B> {
  return (source) =>
    new Observable<T | B>((subscriber) => {
      let count = 0;
      let beats: Subscription | undefined = scheduler.schedule(function (this: SchedulerAction<unknown>) {
        subscriber.next(options.beat(count++));
        this.schedule(undefined, options.intervalMs);
      }, options.intervalMs);
      const stopBeats = () => {
        beats?.unsubscribe();
        beats = undefined;
      };
      const subscription = source.subscribe({
        next: (value) => {
          if (beats !== undefined && options.isOutput(value)) stopBeats();
          subscriber.next(value);
        },
        error: (error: unknown) => {
          stopBeats();
          subscriber.error(error);
        },
        complete: () => {
          stopBeats();
          subscriber.complete();
        },
      });
      return () => {
        stopBeats();
        subscription.unsubscribe();
      };
    });
}
