import type { Subscriber, TeardownLogic } from 'rxjs';
import { eventsDropped, firstWanted } from './event-log-rules.js';
import type { StoredEvent } from './response-store.js';

const COMPACT_AFTER = 1_024;

export const textBytes = (text: string) => Buffer.byteLength(text);
const eventBytes = (event: StoredEvent) => textBytes(event.event) + textBytes(event.data);

interface Follower {
  from: number;
  subscriber: Subscriber<StoredEvent>;
}

/**
 * The event log of one response in the memory store, and its followers. The oldest events may be
 * dropped (the store's bounds decide which: see MemoryResponseStore.append); a follower asking
 * for one of them is refused.
 */
export class MemoryEventLog {
  /** The sequence the next event takes. */
  next = 0;
  final = false;
  /** Kept events are `events[head..]`; dropped ones are cleared and compacted away now and then. */
  private events: (StoredEvent | undefined)[] = [];
  private head = 0;
  private readonly followers = new Set<Follower>();

  /** Events kept now. */
  get kept(): number {
    return this.events.length - this.head;
  }

  get followed(): boolean {
    return this.followers.size > 0;
  }

  /** Adds copies of `events` (new ones: the caller skipped those kept); returns them and their bytes. */
  add(events: readonly StoredEvent[], final: boolean): { copies: StoredEvent[]; bytes: number } {
    let bytes = 0;
    const copies = events.map(({ sequence, event, data }) => {
      const copy = { sequence, event, data };
      bytes += eventBytes(copy);
      this.events.push(copy);
      return copy;
    });
    this.next += copies.length;
    this.final ||= final;
    return { copies, bytes };
  }

  /** Drops the oldest kept event; returns its bytes. */
  dropOldest(): number {
    const bytes = eventBytes(this.events[this.head]!);
    this.events[this.head++] = undefined;
    return bytes;
  }

  /** Lets go of the dropped events' slots once they are many and most of the array. */
  compact(): void {
    if (this.head > COMPACT_AFTER && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  /** Tells each follower the events it waits for, and the end once the log is final. */
  tell(copies: readonly StoredEvent[]): void {
    if (this.followers.size === 0) return;
    // A copy: a follower may leave while it is told.
    for (const follower of [...this.followers]) {
      for (const copy of copies) if (copy.sequence >= follower.from) follower.subscriber.next(copy);
      if (this.final) follower.subscriber.complete();
    }
  }

  /** Sends the kept events after `after`, then follows the live ones to the end. */
  follow(after: number, subscriber: Subscriber<StoredEvent>): TeardownLogic {
    const from = firstWanted(after);
    const firstKept = this.next - this.kept;
    if (from < firstKept) return subscriber.error(eventsDropped(from - 1, firstKept));
    for (let index = this.head + (from - firstKept); index < this.events.length && !subscriber.closed; index++)
      subscriber.next(this.events[index]!);
    if (this.final) return subscriber.complete();
    const follower = { from, subscriber };
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Ends every follower with `error` (the response or the store went). */
  fail(error: unknown): void {
    for (const follower of [...this.followers]) follower.subscriber.error(error);
  }
}
