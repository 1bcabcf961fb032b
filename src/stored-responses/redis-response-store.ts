import type { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import { RESPONSES_REDIS } from '../config/redis-parts.js';
import { ResponsesConfig } from '../config/responses-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { fitBatch, outputItemsOf } from './event-log-rules.js';
import { RedisChannels, type ChannelListener } from './redis-channels.js';
import { RedisConnection } from './redis-connection.js';
import { followEventLog, type EventLogPage } from './redis-event-follower.js';
import {
  entryIdFrom,
  itemPairs,
  responseChannel,
  responseKeys,
  storedEventOf,
  storedItemOf,
  type ResponseKeys,
} from './redis-response-layout.js';
import { defineResponseScripts, type ResponseScripts } from './redis-response-scripts.js';
import type {
  ResponseObject,
  ResponseStore,
  ResponseStoreOperation,
  StoredEvent,
  StoredItem,
  StoredResponse,
} from './response-store.js';

export interface RedisResponseStoreOptions {
  /** Prepended to every key and channel, so several gateways (or tests) can share one Redis. */
  prefix?: string;
  ttlSeconds?: number;
  maxEventsPerResponse?: number;
  /** How long a command may take before the call fails. */
  commandTimeoutMs?: number;
  /** How often followers and cancel listeners read again, whatever the notifications said. */
  pollIntervalMs?: number;
  /** Events read per round trip when a follower catches up. */
  readBatch?: number;
}

const DEFAULTS = new ResponsesConfig();
const APPEND_CHUNK = 2_000;

/**
 * Stored responses in Redis, shared by every replica. A response's events are a Redis Stream
 * (XADD with an exact MAXLEN); followers learn of new ones through one pub/sub connection per
 * store (a channel per followed response, shared by its followers) and read them with XRANGE on
 * the command connection. A follower subscribes before it reads, so nothing appended in between
 * is missed. Writes are Lua scripts: one round trip each, atomic, so replicas never interleave.
 *
 * No command waits for a connection or is sent again after a reconnect, and each fails after
 * `commandTimeoutMs`: a call on a Redis that is down or stuck rejects at once or within that
 * time, with `unavailable`. Followers then error; cancel listeners stay, and read the flag again
 * once the connection is back.
 */
/**
 * Stored responses in Redis, shared by every replica. A response's events are a Redis Stream
 * (XADD with an exact MAXLEN); followers learn of new ones through one pub/sub connection per
 * store (a channel per followed response, shared by its followers: RedisChannels) and read them
 * with XRANGE on the command connection (followEventLog). Writes are Lua scripts
 * (redis-response-scripts.ts): one round trip each, atomic, so replicas never interleave.
 *
 * No command waits for a connection or is sent again after a reconnect (RedisConnection): a call
 * on a Redis that is down or stuck fails within `commandTimeoutMs` with `unavailable`. Followers
 * then error; cancel listeners stay, and read the flag again once the connection is back.
 */
export class RedisResponseStore implements ResponseStore {
  readonly kind = 'redis' as const;
  private readonly commands: RedisConnection;
  private readonly redis: Redis;
  private readonly subscriber: RedisConnection;
  private readonly channels: RedisChannels;
  private readonly scripts: ResponseScripts;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly slackMs: number;
  private readonly maxEvents: number;
  private readonly timeoutMs: number;
  private readonly readBatch: number;
  private readonly poll: NodeJS.Timeout;
  private failureListener?: (operation: ResponseStoreOperation, error: Error) => void;
  private closed = false;

  constructor(url: string, options: RedisResponseStoreOptions = {}) {
    this.prefix = options.prefix ?? RESPONSES_REDIS.keyPrefix;
    this.ttlMs = (options.ttlSeconds ?? DEFAULTS.ttlSeconds) * 1000;
    this.slackMs = Math.min(1_000, Math.floor(this.ttlMs / 10));
    this.maxEvents = options.maxEventsPerResponse ?? DEFAULTS.maxEventsPerResponse;
    this.timeoutMs = options.commandTimeoutMs ?? RESPONSES_REDIS.timeoutMs;
    this.readBatch = options.readBatch ?? 1_000;
    this.commands = this.connect(url, 'gantry-responses');
    this.redis = this.commands.client;
    this.subscriber = this.connect(url, 'gantry-responses-subscriber');
    this.scripts = defineResponseScripts(this.redis);
    this.channels = new RedisChannels(this.subscriber, (error) => this.reportFailure('connection', error));
    // Back after a drop, the command connection re-reads for everyone: a cancel listener's check may have failed meanwhile.
    let commandReadies = 0;
    this.redis.on('ready', () => {
      if (commandReadies++ > 0) this.channels.notifyAll('check');
    });
    this.poll = setInterval(() => this.channels.notifyAll('check'), options.pollIntervalMs ?? 5_000);
    this.poll.unref();
  }

  async create(record: StoredResponse): Promise<void> {
    const id = record.response.id;
    const items = [...record.inputItems, ...outputItemsOf(record.response)];
    await this.commands.send(() =>
      this.scripts.gantryCreate(
        ...this.keysOf(id),
        this.prefix,
        this.ttlMs,
        id,
        JSON.stringify(record.response),
        JSON.stringify(record.inputItems),
        record.previousResponseId ?? '',
        record.response.status,
        ...itemPairs(items),
      ),
    );
  }

  async update(response: ResponseObject): Promise<boolean> {
    const written = await this.commands.send(() =>
      this.scripts.gantryUpdate(
        ...this.keysOf(response.id),
        this.prefix,
        this.ttlMs,
        response.id,
        JSON.stringify(response),
        response.status,
        ...itemPairs(outputItemsOf(response)),
      ),
    );
    return written === 1;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const [response, input, previous] = await this.commands.send(() =>
      this.redis.hmget(this.keysOf(id)[0], 'response', 'input', 'previous'),
    );
    if (response === null || input === null) return undefined;
    return {
      response: JSON.parse(response) as ResponseObject,
      inputItems: JSON.parse(input) as StoredItem[],
      previousResponseId: previous || null,
    };
  }

  async items(ids: readonly string[], maxBytes = Number.MAX_SAFE_INTEGER): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (ids.length === 0) return found;
    const pairs = (await this.commands.send(() =>
      this.scripts.gantryItems(this.prefix, Math.min(maxBytes, Number.MAX_SAFE_INTEGER), ...ids),
    )) as string[];
    for (let index = 0; index + 1 < pairs.length; index += 2) found.set(pairs[index]!, storedItemOf(pairs[index + 1]!));
    return found;
  }

  async delete(id: string): Promise<boolean> {
    const kept = await this.commands.send(() =>
      this.scripts.gantryRemove(...this.keysOf(id), this.prefix, id, this.channelOf(id)),
    );
    return kept === 1;
  }

  async append(id: string, events: readonly StoredEvent[], final: boolean): Promise<void> {
    // Checked here too, so a bad batch fails without a round trip; the script checks it against the log.
    const fit = fitBatch(events, events[0]?.sequence ?? 0, false);
    if ('problem' in fit) throw new Error(fit.problem);
    // One script per batch; only a huge one (a stalled writer catching up) is cut, to keep the arguments few.
    for (let start = 0; start < events.length || start === 0; start += APPEND_CHUNK) {
      const chunk = events.slice(start, start + APPEND_CHUNK);
      const last = start + APPEND_CHUNK >= events.length;
      const triples: (string | number)[] = [];
      for (const event of chunk) triples.push(event.sequence, event.event, event.data);
      await this.commands.send(() =>
        this.scripts.gantryAppend(
          ...this.keysOf(id),
          this.prefix,
          this.ttlMs,
          this.slackMs,
          this.maxEvents,
          final && last ? 1 : 0,
          this.channelOf(id),
          ...triples,
        ),
      );
    }
  }

  events(id: string, after: number): Observable<StoredEvent> {
    const channel = this.channelOf(id);
    return followEventLog(
      {
        readBatch: this.readBatch,
        read: (next) => this.readLog(id, next),
        listen: (listener) => this.channels.listen(channel, listener),
        unlisten: (listener) => this.channels.unlisten(channel, listener),
        reportFailure: (error) => this.reportFailure('events', error),
      },
      id,
      after,
    );
  }

  async requestCancel(id: string): Promise<void> {
    await this.commands.send(() =>
      this.scripts.gantryCancel(this.keysOf(id)[0], this.keysOf(id)[4], this.channelOf(id)),
    );
  }

  cancelRequests(id: string): Observable<void> {
    return new Observable<void>((subscriber) => {
      let done = false;
      const fire = () => {
        if (done) return;
        done = true;
        subscriber.next();
        subscriber.complete();
      };
      const check = () => {
        if (done) return;
        this.commands
          .send(() => this.redis.exists(this.keysOf(id)[4]))
          .then(
            (count) => {
              if (count > 0) fire();
            },
            (error: Error) => this.reportFailure('cancel', error),
          );
      };
      const listener: ChannelListener = {
        notify: (notice) => {
          if (notice === 'c') fire();
          else if (notice === 'check') check();
        },
        lost: (error) => this.reportFailure('cancel', error),
      };
      // A listener whose subscription failed stays: it subscribes again with the connection.
      const channel = this.channelOf(id);
      this.channels.listen(channel, listener).then(check, (error: Error) => this.reportFailure('cancel', error));
      return () => {
        done = true;
        this.channels.unlisten(channel, listener);
      };
    });
  }

  onFailure(listener: (operation: ResponseStoreOperation, error: Error) => void): void {
    this.failureListener = listener;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poll);
    this.channels.loseAll(new GatewayError('unavailable', 'The response store was closed.'));
    // QUIT is answered after what was sent before it; a Redis that does not answer is not waited for.
    const clients = [this.redis, this.subscriber.client];
    let timer: NodeJS.Timeout | undefined;
    const quits = Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
    await Promise.race([quits, new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs * 2)))]);
    clearTimeout(timer);
    for (const client of clients) client.disconnect();
  }

  private connect(url: string, connectionName: string): RedisConnection {
    return new RedisConnection(
      url,
      connectionName,
      this.timeoutMs,
      () => this.closed,
      (error) => this.reportFailure('connection', error),
    );
  }

  private async readLog(id: string, next: number): Promise<EventLogPage | undefined> {
    const [, , stream, state] = this.keysOf(id);
    const reply = (await this.commands.send(() =>
      this.scripts.gantryRead(state, stream, entryIdFrom(next), this.readBatch),
    )) as [string, string, [string, string[]][]] | null;
    if (reply === null) return undefined;
    const [nextSequence, final, entries] = reply;
    return { next: Number(nextSequence), final: final === '1', events: entries.map(storedEventOf) };
  }

  private keysOf(id: string): ResponseKeys {
    return responseKeys(this.prefix, id);
  }

  private channelOf(id: string): string {
    return responseChannel(this.prefix, id);
  }

  private reportFailure(operation: ResponseStoreOperation, error: Error): void {
    // What closing tears down is no failure.
    if (!this.closed) this.failureListener?.(operation, error);
  }
}
