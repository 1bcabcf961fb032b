import { Observable } from 'rxjs';

/**
 * The values of the observable that `project` makes from what `start()` resolves to: RxJS's
 * `defer(start).pipe(mergeMap(project))` for a single promise, without the operator's subscribers
 * and closures, which an open stream would hold for its whole life. The projected observable is
 * subscribed with the outer subscriber itself, so unsubscribing ends it. `start` runs on
 * subscription; a throw or a rejection, in it or in `project`, is the observable's error. Once
 * unsubscribed, what the promise brings is dropped.
 */
export function afterPromise<T, R>(start: () => Promise<T>, project: (value: T) => Observable<R>): Observable<R> {
  return new Observable<R>((subscriber) => {
    start().then(
      (value) => {
        if (subscriber.closed) return;
        let projected: Observable<R>;
        try {
          projected = project(value);
        } catch (error) {
          subscriber.error(error);
          return;
        }
        projected.subscribe(subscriber);
      },
      (error: unknown) => subscriber.error(error),
    );
  });
}
