import { Subject, type Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import type { StoredEvent } from './response-store.js';
import { followedFrames } from './stored-frames.js';

const stored = (sequence: number, event = 'response.in_progress'): StoredEvent => ({
  sequence,
  event,
  data: JSON.stringify({ type: event, sequence_number: sequence }),
});

/** Follows `events$` with a drain deadline the test fires; returns what it saw and whether it completed. */
function follow(events$: Observable<StoredEvent>) {
  const deadline = new Subject<never>();
  const seen: SseFrame[] = [];
  let completed = false;
  followedFrames(events$, -1, undefined, { deadline$: deadline, graceMs: 1_000 }).subscribe({
    next: (frame) => seen.push(frame),
    complete: () => (completed = true),
  });
  return { seen, done: () => completed, cut: () => deadline.error(new Error('drain deadline')) };
}

describe('followedFrames at a drain deadline', () => {
  afterEach(() => vi.useRealTimers());

  it("passes the run's last events after the deadline and ends with them", () => {
    vi.useFakeTimers();
    const events = new Subject<StoredEvent>();
    const follower = follow(events);
    events.next(stored(0));
    follower.cut();
    events.next(stored(1, 'response.failed'));
    events.complete();
    expect(follower.seen.map((frame) => ('event' in frame ? frame.event : undefined))).toEqual([
      'response.in_progress',
      'response.failed',
    ]);
    expect(follower.done()).toBe(true);
    vi.advanceTimersByTime(5_000);
    expect(follower.seen).toHaveLength(2);
  });

  it('ends a follower whose run goes on elsewhere with an error event, numbered next, once the grace is over', () => {
    vi.useFakeTimers();
    const events = new Subject<StoredEvent>();
    const follower = follow(events);
    events.next(stored(0));
    follower.cut();
    vi.advanceTimersByTime(999);
    expect(follower.done()).toBe(false);
    vi.advanceTimersByTime(1);
    expect(follower.done()).toBe(true);
    expect(JSON.parse((follower.seen.at(-1) as { data: string }).data)).toMatchObject({
      type: 'error',
      code: 'shutting_down',
      sequence_number: 1,
    });
    expect(events.observed).toBe(false);
  });
});
