import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { stallWatch } from './stall-watch.js';

const stalled = new Error('stalled');

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('stallWatch', () => {
  it('errors once the source is silent for the timeout after a value', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('a 99ms b 400ms c|');
      expectObservable(source.pipe(stallWatch(300, () => stalled))).toBe('a 99ms b 299ms #', undefined, stalled);
    });
  });

  it('lets values closer than the timeout through, however many', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('a 250ms b 250ms c 250ms d|');
      expectObservable(source.pipe(stallWatch(300, () => stalled))).toBe('a 250ms b 250ms c 250ms d|');
    });
  });

  it('does not watch the silence before the first value', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('1000ms a 100ms |');
      expectObservable(source.pipe(stallWatch(300, () => stalled))).toBe('1000ms a 100ms |');
    });
  });

  it('is reset by progress only: a source that keeps sending what is not progress is caught', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // `p` is progress, `k` a keep-alive: a drip every 100 ms after the second token.
      const source = cold('p 100ms p 99ms k 99ms k 99ms k 99ms k 99ms k|');
      const progress = () => (value: string) => value === 'p';
      expectObservable(source.pipe(stallWatch(300, () => stalled, progress))).toBe(
        'p 100ms p 99ms k 99ms k 99ms (k#)',
        undefined,
        stalled,
      );
    });
  });

  it('does not start on values that are not progress', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('k 400ms k 400ms p 100ms |');
      const progress = () => (value: string) => value === 'p';
      expectObservable(source.pipe(stallWatch(300, () => stalled, progress))).toBe('k 400ms k 400ms p 100ms |');
    });
  });

  it('stops its timer and the source when unsubscribed', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a 1000ms b|');
      expectObservable(source.pipe(stallWatch(300, () => stalled)), '^ 100ms !').toBe('a');
      expectSubscriptions(source.subscriptions).toBe('^ 100ms !');
    });
  });
});
