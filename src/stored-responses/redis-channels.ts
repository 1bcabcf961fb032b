import type { RedisConnection } from './redis-connection.js';

/** What a channel's message says: events appended, a cancel requested, the response deleted; or a re-check. */
export type Notice = 'e' | 'c' | 'd' | 'check';

export interface ChannelListener {
  notify(notice: Notice): void;
  /** The subscription was lost with the connection. */
  lost(error: Error): void;
}

interface Channel {
  listeners: Set<ChannelListener>;
  /** The SUBSCRIBE in flight or done on the current connection; undefined when there is none. */
  subscribed?: Promise<void>;
  live: boolean;
}

/**
 * The Redis response store's notices: one pub/sub connection per store, a channel per followed
 * response, shared by its listeners. A channel still listened to when the connection comes back
 * subscribes again, and its listeners read what they missed.
 */
export class RedisChannels {
  private readonly channels = new Map<string, Channel>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly reportFailure: (error: Error) => void,
  ) {
    const client = connection.client;
    client.on('message', (channel: string, message: string) => this.dispatch(channel, message as Notice));
    client.on('close', () => this.subscriptionsLost());
    client.on('ready', () => this.resubscribe());
  }

  /** Adds a listener to the channel; resolves once the channel is subscribed. */
  listen(name: string, listener: ChannelListener): Promise<void> {
    let channel = this.channels.get(name);
    if (channel === undefined) {
      channel = { listeners: new Set(), live: false };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    return (channel.subscribed ??= this.subscribe([[name, channel]]));
  }

  unlisten(name: string, listener: ChannelListener): void {
    const channel = this.channels.get(name);
    if (channel === undefined || !channel.listeners.delete(listener) || channel.listeners.size > 0) return;
    this.channels.delete(name);
    // Sent after any SUBSCRIBE of the same channel on this connection, so it lands after it.
    const client = this.connection.client;
    if (client.status === 'ready') client.unsubscribe(name).catch(() => undefined);
  }

  notifyAll(notice: Notice): void {
    for (const channel of [...this.channels.values()])
      for (const listener of [...channel.listeners]) listener.notify(notice);
  }

  /** The store closes: every listener learns it, and none is left. */
  loseAll(error: Error): void {
    for (const channel of [...this.channels.values()])
      for (const listener of [...channel.listeners]) listener.lost(error);
    this.channels.clear();
  }

  private subscribe(channels: [string, Channel][]): Promise<void> {
    const client = this.connection.client;
    const attempt = this.connection
      .send(() => client.subscribe(...channels.map(([name]) => name)))
      .then(() => {
        for (const [, channel] of channels) if (channel.subscribed === attempt) channel.live = true;
      });
    for (const [, channel] of channels) channel.subscribed = attempt;
    attempt.catch(() => {
      for (const [, channel] of channels) if (channel.subscribed === attempt) channel.subscribed = undefined;
    });
    return attempt;
  }

  private dispatch(name: string, notice: Notice): void {
    for (const listener of [...(this.channels.get(name)?.listeners ?? [])]) listener.notify(notice);
  }

  /** The connection dropped: its subscriptions went with it (notices in between are lost). */
  private subscriptionsLost(): void {
    const error = new Error('the Redis subscriber connection was lost');
    for (const channel of [...this.channels.values()]) {
      const wasLive = channel.live;
      channel.live = false;
      channel.subscribed = undefined;
      if (wasLive) for (const listener of [...channel.listeners]) listener.lost(error);
    }
  }

  /** The connection is (back) up: the channels still listened to subscribe again and read what they missed. */
  private resubscribe(): void {
    const pending = [...this.channels].filter(([, channel]) => channel.subscribed === undefined);
    if (pending.length === 0) return;
    this.subscribe(pending).then(
      () => {
        for (const [, channel] of pending) for (const listener of [...channel.listeners]) listener.notify('check');
      },
      (error: Error) => this.reportFailure(error),
    );
  }
}
