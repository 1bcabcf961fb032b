import { describe, expect, it } from 'vitest';
import { MockScheduler } from './mock-scheduler.js';

describe("MockScheduler: vLLM's scheduling as the mock plays it", () => {
  it('runs maxRunning at once and starts the waiting ones first come, first served; a leaver gives up its place', async () => {
    const scheduler = new MockScheduler(() => 2);
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    const aborts = new Map<string, AbortController>();
    const submit = (name: string) => {
      const abort = new AbortController();
      aborts.set(name, abort);
      return scheduler.admit(abort.signal).then(
        (release) => {
          started.push(name);
          return releases.set(name, release);
        },
        () => started.push(`${name} left`),
      );
    };
    const all = ['a', 'b', 'c', 'd', 'e'].map(submit);
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    expect([scheduler.running, scheduler.queued]).toEqual([2, 3]);
    aborts.get('c')!.abort();
    releases.get('a')!();
    releases.get('a')!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a', 'b', 'c left', 'd']);
    expect([scheduler.running, scheduler.queued]).toEqual([2, 1]);
    releases.get('b')!();
    releases.get('d')!();
    await Promise.all(all);
    expect(started.at(-1)).toBe('e');
  });

  it('runs everything at once with no limit (0)', async () => {
    const scheduler = new MockScheduler(() => 0);
    await Promise.all(Array.from({ length: 50 }, () => scheduler.admit(new AbortController().signal)));
    expect(scheduler.running).toBe(50);
  });
});
