import { concat, defer, from } from 'rxjs';
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { keepalive } from './keepalive.js';

type Item = { type: 'ack' | 'out' | 'pause' };

const values: Record<string, Item | string> = {
  a: { type: 'ack' },
  o: { type: 'out' },
  p: { type: 'pause' },
  b: 'beat',
};

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const beatEvery = (intervalMs: number, testScheduler: TestScheduler) =>
  keepalive<Item, string>({ intervalMs, isOutput: (item) => item.type === 'out', beat: () => 'beat' }, testScheduler);

const beatThroughPauses = (intervalMs: number, testScheduler: TestScheduler) =>
  keepalive<Item, string>(
    {
      intervalMs,
      isOutput: (item) => item.type === 'out',
      isPause: (item) => item.type === 'pause',
      beat: (n) => `beat ${n}`,
    },
    testScheduler,
  );

describe('keepalive()', () => {
  it('beats again after a pause (a continuation waiting for its first token), from a fresh interval, until the next output', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('4ms o 1ms p 7ms o 5ms o|', values as Record<string, Item>);
      const beats = { ...values, x: 'beat 0', y: 'beat 1', z: 'beat 2' };
      expectObservable(source.pipe(beatThroughPauses(3, ts))).toBe('3ms x 0ms o 1ms p 2ms y 2ms z 1ms o 5ms o|', beats);
    });
  });

  it('a pause before any output changes nothing; without isPause a pause never starts the beats', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const source = cold<Item>('1ms p 3ms o 1ms p 7ms o|', values as Record<string, Item>);
      const beats = { ...values, x: 'beat 0', y: 'beat 1', z: 'beat 2' };
      expectObservable(source.pipe(beatThroughPauses(3, ts))).toBe('1ms p 1ms x 1ms o 1ms p 2ms y 2ms z 1ms o|', beats);
      expectObservable(source.pipe(beatEvery(3, ts))).toBe('1ms p 1ms b 1ms o 1ms p 7ms o|', values);
    });
  });

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

describe('keepalive(): subscriptions and teardown', () => {
  /** Counts the beats made, so that a beat timer left running shows even after the output ends. */
  function countingBeats(intervalMs: number, testScheduler: TestScheduler) {
    const made = { count: 0 };
    const operator = keepalive<Item, string>(
      {
        intervalMs,
        isOutput: (item) => item.type === 'out',
        beat: () => {
          made.count += 1;
          return 'beat';
        },
      },
      testScheduler,
    );
    return { made, operator };
  }

  /** `run` with virtual time bounded, so that a beat timer left running fails the test instead of spinning. */
  function runBounded(testScheduler: TestScheduler, callback: (helpers: RunHelpers) => void): void {
    testScheduler.run((helpers) => {
      testScheduler.maxFrames = 40;
      callback(helpers);
    });
  }

  it.each([
    ['output, then an ack', '5ms o 3ms a|', '2ms b 1ms b 0ms o 3ms a|'],
    ['no output', '5ms |', '2ms b 1ms b 0ms |'],
    ['a failure', '3ms #', '2ms b 0ms #'],
  ])('subscribes to a cold source once (%s)', (_, sourceMarbles, expected) => {
    const ts = scheduler();
    let subscriptions = 0;
    runBounded(ts, ({ cold, expectObservable }) => {
      const source = defer(() => {
        subscriptions += 1;
        return cold<Item>(sourceMarbles, values as Record<string, Item>);
      });
      expectObservable(source.pipe(beatEvery(2, ts))).toBe(expected, values);
    });
    expect(subscriptions).toBe(1);
  });

  it('makes no beat at all when the source emits its first output synchronously at subscription', () => {
    const ts = scheduler();
    const { made, operator } = countingBeats(2, ts);
    let subscriptions = 0;
    runBounded(ts, ({ cold, expectObservable }) => {
      const source = defer(() => {
        subscriptions += 1;
        const now: Item[] = [{ type: 'ack' }, { type: 'out' }];
        return concat(from(now), cold<Item>('9ms a|', values as Record<string, Item>));
      });
      expectObservable(source.pipe(operator)).toBe('(ao) 5ms a|', values);
    });
    expect(made.count).toBe(0);
    expect(subscriptions).toBe(1);
  });

  it('numbers the beats from 0', () => {
    const ts = scheduler();
    runBounded(ts, ({ cold, expectObservable }) => {
      const source = cold<Item>('7ms o|', values as Record<string, Item>);
      const numbered = keepalive<Item, string>(
        { intervalMs: 2, isOutput: (item) => item.type === 'out', beat: (n) => `beat ${n}` },
        ts,
      );
      const expected = { ...values, x: 'beat 0', y: 'beat 1', z: 'beat 2' };
      expectObservable(source.pipe(numbered)).toBe('2ms x 1ms y 1ms z 0ms o|', expected);
    });
  });

  it('stops the beat timer when the source completes', () => {
    const ts = scheduler();
    const { made, operator } = countingBeats(3, ts);
    runBounded(ts, ({ cold, expectObservable }) => {
      const source = cold<Item>('7ms |', values as Record<string, Item>);
      expectObservable(source.pipe(operator)).toBe('3ms b 2ms b 0ms |', values);
    });
    expect(made.count).toBe(2);
  });

  it('stops the beat timer when the source fails', () => {
    const ts = scheduler();
    const { made, operator } = countingBeats(3, ts);
    runBounded(ts, ({ cold, expectObservable }) => {
      const source = cold<Item>('7ms #', values as Record<string, Item>, new Error('boom'));
      expectObservable(source.pipe(operator)).toBe('3ms b 2ms b 0ms #', values, new Error('boom'));
    });
    expect(made.count).toBe(2);
  });

  it('stops the beat timer and unsubscribes the source on unsubscribe', () => {
    const ts = scheduler();
    const { made, operator } = countingBeats(3, ts);
    runBounded(ts, ({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<Item>('30ms o|', values as Record<string, Item>);
      expectObservable(source.pipe(operator), '^ 7ms !').toBe('3ms b 2ms b', values);
      expectSubscriptions(source.subscriptions).toBe('^ 7ms !');
    });
    expect(made.count).toBe(2);
  });
});
