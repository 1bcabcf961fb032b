import { lastValueFrom, Observable, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { afterPromise } from './after-promise.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('afterPromise', () => {
  it('starts on subscription only, then emits what the projected observable emits, and completes', async () => {
    let starts = 0;
    const values$ = afterPromise(
      async () => {
        starts += 1;
        return 2;
      },
      (n) => of(n, n * 10),
    );
    expect(starts).toBe(0);
    expect(await lastValueFrom(values$.pipe(toArray()))).toEqual([2, 20]);
    expect(await lastValueFrom(values$.pipe(toArray()))).toEqual([2, 20]);
    expect(starts).toBe(2);
  });

  it('fails with a rejection, a throw in start, or a throw in project', async () => {
    const failure = (values$: Observable<unknown>) => lastValueFrom(values$).catch((error: Error) => error.message);
    expect(
      await failure(
        afterPromise(
          () => Promise.reject(new Error('refused')),
          () => of(1),
        ),
      ),
    ).toBe('refused');
    expect(
      await failure(
        afterPromise(
          () => {
            throw new Error('thrown');
          },
          () => of(1),
        ),
      ),
    ).toBe('thrown');
    expect(
      await failure(
        afterPromise(
          async () => 1,
          () => {
            throw new Error('projected');
          },
        ),
      ),
    ).toBe('projected');
  });

  it('drops what the promise brings once unsubscribed: the projection never runs', async () => {
    let projected = false;
    const subscription = afterPromise(
      async () => 1,
      () => {
        projected = true;
        return of(1);
      },
    ).subscribe();
    subscription.unsubscribe();
    await settle();
    expect(projected).toBe(false);
  });

  it('tears the projected observable down when unsubscribed after the promise settled', async () => {
    const log: string[] = [];
    const inner$ = new Observable<number>(() => {
      log.push('subscribed');
      return () => log.push('torn down');
    });
    const subscription = afterPromise(
      async () => 1,
      () => inner$,
    ).subscribe();
    await settle();
    expect(log).toEqual(['subscribed']);
    subscription.unsubscribe();
    expect(log).toEqual(['subscribed', 'torn down']);
  });
});
