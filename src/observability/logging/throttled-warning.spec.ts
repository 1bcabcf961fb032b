import { describe, expect, it } from 'vitest';
import { ThrottledWarning } from './throttled-warning.js';

describe('ThrottledWarning', () => {
  it('warns at once, then at most once per interval, counting the failures the warning covers', () => {
    const logged: string[] = [];
    let now = 1_000;
    const warning = new ThrottledWarning(
      (message) => logged.push(message),
      10_000,
      () => now,
    );
    const fail = () => warning.failure((more) => `store down${more}.`);

    expect(fail()).toBe(true);
    now += 4_000;
    expect(fail()).toBe(false);
    now += 4_000;
    expect(fail()).toBe(false);
    now += 2_000;
    expect(fail()).toBe(true);
    now += 10_000;
    expect(fail()).toBe(true);
    expect(logged).toEqual(['store down.', 'store down (3 failures since the last warning).', 'store down.']);
  });
});
