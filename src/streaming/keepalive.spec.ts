import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { keepalive } from './keepalive.js';

type Item = { type: 'ack' | 'out' };

const values: Record<string, Item | string> = {
  a: { type: 'ack' },
  o: { type: 'out' },
  b: 'beat',
};

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const beatEvery = (intervalMs: number, testScheduler: TestScheduler) =>
  keepalive<Item, string>(
    { intervalMs, isOutput: (item) => item.type === 'out', beat: () => 'beat' },
    testScheduler,
  );

describe('keepalive()', () => {
  it('beats every interval while the source is silent', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('10ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('3ms b 2ms b 2ms b 0ms o|', values);
    });
  });

  it('sends no beat after the first output, even when the source pauses again', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('4ms o 20ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('3ms b 0ms o 20ms o|', values);
    });
  });

  it('keeps beating through acks that carry no output', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('2ms a 4ms a 3ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('2ms a b 2ms b a 1ms b 1ms o|', values);
    });
  });

  it('ends the beats when the source completes without output', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('7ms |', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('3ms b 2ms b 0ms |', values);
    });
  });

  it('ends the beats when the source fails, passing the error on', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('7ms #', values as Record<string, Item>, new Error('boom'));
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('3ms b 2ms b 0ms #', values, new Error('boom'));
    });
  });

  it('tears down both the source and the beats on unsubscribe', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<Item>('20ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(3, ts)), '^ 7ms !').toBe('3ms b 2ms b', values);
      expectSubscriptions(source.subscriptions).toBe('^ 7ms !');
    });
  });

  it('lets a synchronous first output through without any beat', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('o 5ms a|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(2, ts))).toBe('o 5ms a|', values);
    });
  });

  it('subscribes to the source exactly once', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<Item>('5ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(beatEvery(2, ts))).toBe('2ms b 1ms b 0ms o|', values);
      expectSubscriptions(source.subscriptions).toBe('^ 5ms !');
    });
  });
});
