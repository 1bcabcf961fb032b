import { Observable, type Subscriber } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { storeUnavailable } from '../stored-responses/event-log-rules.js';
import {
  InstanceResponseStore,
  type ResponseObject,
  type ResponseStoreOperation,
  type StoredEvent,
  type StoredItem,
  type StoredResponse,
} from '../stored-responses/response-store.js';
import { ChannelClosedError, fromWire, type IpcChannel } from './ipc-channel.js';
import type { StoredEventsMessage, SubscriptionEnd } from './worker-protocol.js';

/** A subscription of this worker served by the primary: a follower of an event log, or a cancel listener. */
type Remote =
  { kind: 'events'; subscriber: Subscriber<StoredEvent> } | { kind: 'cancel'; subscriber: Subscriber<void> };

/**
 * `responses.store: memory` in a worker of several: the responses live in the primary, one store
 * for the instance (its bounds, expiry and per-key shares as in one process), so a response kept
 * through one worker is read, continued, followed, cancelled and deleted through any. Calls are
 * round trips over the IPC link; a follower or a cancel listener is a subscription the primary
 * feeds with events. When the primary is gone, calls fail as an unreachable store does (a 503)
 * and followers end with it; cancel listeners wait, as the contract says.
 */
export class PrimaryResponseStore extends InstanceResponseStore {
  private nextSubscription = 0;
  private readonly remotes = new Map<number, Remote>();
  private failureListener?: (operation: ResponseStoreOperation, error: Error) => void;

  constructor(private readonly channel: IpcChannel) {
    super();
    channel.on<StoredEventsMessage>('responses.events', ({ subscription, events }) => {
      const remote = this.remotes.get(subscription);
      if (remote?.kind === 'events') for (const event of events) remote.subscriber.next(event);
    });
    channel.on<SubscriptionEnd>('responses.end', ({ subscription, error }) => {
      const remote = this.remotes.get(subscription);
      if (remote === undefined) return;
      this.remotes.delete(subscription);
      if (error !== undefined) return remote.subscriber.error(fromWire(error));
      if (remote.kind === 'cancel') remote.subscriber.next();
      remote.subscriber.complete();
    });
  }

  create(record: StoredResponse): Promise<void> {
    return this.call('responses.create', { record });
  }

  update(response: ResponseObject): Promise<boolean> {
    return this.call('responses.update', { response });
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    return (await this.call<StoredResponse | null>('responses.get', { id })) ?? undefined;
  }

  async items(ids: readonly string[], maxBytes?: number): Promise<Map<string, StoredItem>> {
    return new Map(
      await this.call<Array<[string, StoredItem]>>('responses.items', { ids, maxBytes: maxBytes ?? null }),
    );
  }

  delete(id: string): Promise<boolean> {
    return this.call('responses.delete', { id });
  }

  append(id: string, events: readonly StoredEvent[], final: boolean): Promise<void> {
    return this.call('responses.append', { id, events, final });
  }

  requestCancel(id: string): Promise<void> {
    return this.call('responses.requestCancel', { id });
  }

  events(id: string, after: number): Observable<StoredEvent> {
    return this.subscription((subscriber) => ({ kind: 'events', subscriber }), 'responses.follow', { id, after });
  }

  cancelRequests(id: string): Observable<void> {
    return this.subscription((subscriber) => ({ kind: 'cancel', subscriber }), 'responses.listenCancel', { id });
  }

  onFailure(listener: (operation: ResponseStoreOperation, error: Error) => void): void {
    this.failureListener = listener;
  }

  /** The gateway stops: its subscriptions end here and at the primary. */
  async close(): Promise<void> {
    const closed = new GatewayError('unavailable', 'The response store was closed.');
    for (const [subscription, remote] of [...this.remotes]) {
      this.remotes.delete(subscription);
      this.channel.notify('responses.unsubscribe', { subscription });
      if (remote.kind === 'events') remote.subscriber.error(closed);
    }
  }

  /** The link to the primary is gone: followers end as with an unreachable store; cancel listeners wait. */
  primaryGone(): void {
    const gone = storeUnavailable(new ChannelClosedError());
    this.failureListener?.('connection', gone);
    for (const [subscription, remote] of [...this.remotes]) {
      if (remote.kind !== 'events') continue;
      this.remotes.delete(subscription);
      remote.subscriber.error(gone);
    }
  }

  private subscription<T>(
    remote: (subscriber: Subscriber<T>) => Remote,
    method: string,
    params: Record<string, unknown>,
  ): Observable<T> {
    return new Observable<T>((subscriber) => {
      const subscription = (this.nextSubscription += 1);
      this.remotes.set(subscription, remote(subscriber));
      if (!this.channel.notify(method, { ...params, subscription })) {
        this.remotes.delete(subscription);
        // A cancel listener waits for a store that cannot be reached (the contract); a follower fails.
        if (method === 'responses.follow') subscriber.error(storeUnavailable(new ChannelClosedError()));
        return;
      }
      return () => {
        if (this.remotes.delete(subscription)) this.channel.notify('responses.unsubscribe', { subscription });
      };
    });
  }

  /** One round trip; a link that is gone fails as an unreachable store does. */
  private async call<T>(method: string, params: unknown): Promise<T> {
    try {
      return await this.channel.call<T>(method, params);
    } catch (error) {
      throw error instanceof ChannelClosedError ? storeUnavailable(error) : error;
    }
  }
}
