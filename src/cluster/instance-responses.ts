import type { Subscription } from 'rxjs';
import { MemoryResponseStore, type MemoryResponseStoreOptions } from '../stored-responses/memory-response-store.js';
import type { StoredEvent } from '../stored-responses/response-store.js';

/** The most events one message to a worker carries (a long log replayed goes in several). */
const MAX_EVENTS_PER_MESSAGE = 512;

/** Where a worker's subscription sends what it hears. */
export interface SubscriptionSink<T> {
  next(values: T): void;
  end(error?: unknown): void;
}

/**
 * The stored responses of `responses.store: memory` for the whole instance, held by the primary:
 * one MemoryResponseStore (its bounds, expiry and per-key shares as in one process) that every
 * worker reads and writes, with each worker's followers and cancel listeners remembered by
 * worker, so that a dead worker's subscriptions end at once.
 */
export class InstanceResponses {
  readonly store: MemoryResponseStore;
  private readonly subscriptions = new Map<number, Map<number, Subscription>>();

  constructor(options: MemoryResponseStoreOptions) {
    this.store = new MemoryResponseStore(options);
  }

  /** Follows a log for a worker: the events of one turn go in one message, then the end. */
  follow(worker: number, subscription: number, id: string, after: number, sink: SubscriptionSink<StoredEvent[]>): void {
    let batch: StoredEvent[] = [];
    const flush = () => {
      if (batch.length === 0) return;
      const events = batch;
      batch = [];
      sink.next(events);
    };
    const end = (error?: unknown) => {
      flush();
      this.forget(worker, subscription);
      sink.end(error);
    };
    this.hold(
      worker,
      subscription,
      this.store.events(id, after).subscribe({
        next: (event) => {
          if (batch.push(event) === 1) queueMicrotask(flush);
          else if (batch.length >= MAX_EVENTS_PER_MESSAGE) flush();
        },
        error: end,
        complete: () => end(),
      }),
    );
  }

  /** Listens for a cancel of `id` for a worker: `sink.end()` when one is (or was) requested. */
  listenCancel(worker: number, subscription: number, id: string, sink: Pick<SubscriptionSink<never>, 'end'>): void {
    this.hold(
      worker,
      subscription,
      this.store.cancelRequests(id).subscribe({
        complete: () => {
          this.forget(worker, subscription);
          sink.end();
        },
      }),
    );
  }

  unsubscribe(worker: number, subscription: number): void {
    this.subscriptions.get(worker)?.get(subscription)?.unsubscribe();
    this.forget(worker, subscription);
  }

  /** Ends every subscription a worker held (it died); returns how many. */
  releaseWorker(worker: number): number {
    const held = this.subscriptions.get(worker);
    this.subscriptions.delete(worker);
    for (const subscription of held?.values() ?? []) subscription.unsubscribe();
    return held?.size ?? 0;
  }

  private hold(worker: number, id: number, subscription: Subscription): void {
    // One that ended as it began (a closed log replayed whole) holds nothing.
    if (subscription.closed) return;
    let held = this.subscriptions.get(worker);
    if (held === undefined) this.subscriptions.set(worker, (held = new Map<number, Subscription>()));
    held.set(id, subscription);
  }

  private forget(worker: number, subscription: number): void {
    const held = this.subscriptions.get(worker);
    held?.delete(subscription);
    if (held?.size === 0) this.subscriptions.delete(worker);
  }
}
