import { Redis, ReplyError } from 'ioredis';
import { Observable } from 'rxjs';
import { RESPONSES_REDIS } from '../config/redis-parts.js';
import { ResponsesConfig } from '../config/responses-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import {
  eventsDropped,
  firstWanted,
  fitBatch,
  noEventLog,
  outputItemsOf,
  storeUnavailable,
} from './event-log-rules.js';
import type {
  ResponseObject,
  ResponseStore,
  ResponseStoreOperation,
  StoredEvent,
  StoredItem,
  StoredResponse,
} from './response-store.js';

// Keys of one response, always passed in this order as KEYS[1..5]:
//   r: a hash {response, status, input, previous}   s: the set of its item ids   e: its event stream
//   l: its log's state {next, final}        c: its cancel flag
// Items live under `<prefix>i:<item id>` as "<owning response id>\n<item JSON>": the last response
// to write an id owns it, and a delete removes only the items it owns. Every key carries a TTL,
// pushed back on each write, so nothing outlives ttlSeconds after the response's last write.
// Stream entry ids are `0-<sequence + 1>`, so a read after sequence N starts at `0-<N + 2>`.

/** Pushes the TTL of every key of the response, its items included. ARGV[1] is the prefix, ARGV[2] the TTL. */
const REFRESH = `
local function refresh()
  for _, itemId in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    redis.call('PEXPIRE', ARGV[1] .. 'i:' .. itemId, ARGV[2])
  end
  for index = 1, 5 do redis.call('PEXPIRE', KEYS[index], ARGV[2]) end
end
local function keepItems(owner, from)
  for index = from, #ARGV, 2 do
    redis.call('SET', ARGV[1] .. 'i:' .. ARGV[index], owner .. '\\n' .. ARGV[index + 1], 'PX', ARGV[2])
    redis.call('SADD', KEYS[2], ARGV[index])
  end
end
`;

/** ARGV: prefix, ttl, id, response JSON, input JSON, previous id ('' for none), status, then item id / JSON pairs. */
const CREATE = `${REFRESH}
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('HSET', KEYS[1], 'response', ARGV[4], 'input', ARGV[5], 'previous', ARGV[6], 'status', ARGV[7])
keepItems(ARGV[3], 8)
refresh()
return 1`;

/**
 * ARGV: prefix, ttl, id, response JSON, status, then item id / JSON pairs. 0 when the response is
 * not kept, 2 when its kept state is final and this one is another (see mayReplace); 1 written.
 */
const UPDATE = `${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local kept = redis.call('HGET', KEYS[1], 'status')
-- A record written without its status field (by a gateway that kept it in the response only): read it there.
if not kept then kept = cjson.decode(redis.call('HGET', KEYS[1], 'response')).status end
if kept ~= ARGV[5] and kept ~= 'queued' and kept ~= 'in_progress' then return 2 end
redis.call('HSET', KEYS[1], 'response', ARGV[4], 'status', ARGV[5])
keepItems(ARGV[3], 6)
refresh()
return 1`;

/**
 * ARGV: prefix, ttl, refresh slack, max events, final (1/0), channel, then sequence / event / data
 * triples. The items' TTLs are pushed only when they fell behind by the slack: an append comes
 * every turn of the event loop while a response streams, and its items do not change meanwhile.
 */
const APPEND = `${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local state = redis.call('HMGET', KEYS[4], 'next', 'final')
local nextSequence = tonumber(state[1]) or 0
local count = (#ARGV - 6) / 3
-- The batch's sequences run on from its first (the caller checked); events the log holds are skipped.
local skip = 0
if count > 0 then
  local first = tonumber(ARGV[7])
  if first > nextSequence then
    return redis.error_reply('ERR gantry: event sequence ' .. ARGV[7] .. ' where ' .. nextSequence .. ' was expected')
  end
  skip = math.min(nextSequence - first, count)
end
if state[2] == '1' and skip < count then return redis.error_reply('ERR gantry: the event log is closed: its final event was appended') end
for index = skip, count - 1 do
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], '0-' .. (nextSequence + index - skip + 1), 'e', ARGV[8 + index * 3], 'd', ARGV[9 + index * 3])
end
local final = '0'
if state[2] == '1' or ARGV[5] == '1' then final = '1' end
redis.call('HSET', KEYS[4], 'next', nextSequence + count - skip, 'final', final)
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) - tonumber(ARGV[3]) then
  refresh()
else
  for _, index in ipairs({1, 3, 4, 5}) do redis.call('PEXPIRE', KEYS[index], ARGV[2]) end
end
if count > skip or ARGV[5] == '1' then redis.call('PUBLISH', ARGV[6], 'e') end
return 1`;

/** KEYS: log state, stream. ARGV: first entry id, count. Nil when there is no log. */
const READ = `
local state = redis.call('HMGET', KEYS[1], 'next', 'final')
if not state[1] then return false end
return {state[1], state[2] or '0', redis.call('XRANGE', KEYS[2], ARGV[1], '+', 'COUNT', ARGV[2])}`;

/**
 * ARGV: prefix, max bytes, then item ids. Id / value pairs of the items found, in order, until
 * their JSON passes max bytes (a value is "<owner>\n<JSON>").
 */
const ITEMS = `
local found = {}
local bytes = 0
local limit = tonumber(ARGV[2])
for index = 3, #ARGV do
  local value = redis.call('GET', ARGV[1] .. 'i:' .. ARGV[index])
  if value then
    found[#found + 1] = ARGV[index]
    found[#found + 1] = value
    bytes = bytes + #value - string.find(value, '\\n', 1, true)
    if bytes > limit then break end
  end
end
return found`;

/** ARGV: prefix, id, channel. 1 when the response was kept. */
const REMOVE = `
local kept = redis.call('EXISTS', KEYS[1])
local mark = ARGV[2] .. '\\n'
for _, itemId in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local key = ARGV[1] .. 'i:' .. itemId
  local value = redis.call('GET', key)
  if value and string.sub(value, 1, #mark) == mark then redis.call('DEL', key) end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('PUBLISH', ARGV[3], 'd')
return kept`;

/** KEYS: response, cancel flag. ARGV: channel. The flag lives as long as the response. */
const CANCEL = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ttl)
redis.call('PUBLISH', ARGV[1], 'c')
return 1`;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;
interface Scripts {
  gantryCreate: ScriptCall;
  gantryUpdate: ScriptCall;
  gantryAppend: ScriptCall;
  gantryRead: ScriptCall;
  gantryItems: ScriptCall;
  gantryRemove: ScriptCall;
  gantryCancel: ScriptCall;
}

/** What a channel's message says: events appended, a cancel requested, the response deleted; or a re-check. */
type Notice = 'e' | 'c' | 'd' | 'check';

interface ChannelListener {
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
const SCRIPT_ERROR = 'gantry:';
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
export class RedisResponseStore implements ResponseStore {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly scripts: Scripts;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly slackMs: number;
  private readonly maxEvents: number;
  private readonly timeoutMs: number;
  private readonly readBatch: number;
  private readonly channels = new Map<string, Channel>();
  private readonly firstReady = new Map<Redis, Promise<void>>();
  private readonly everReady = new Set<Redis>();
  /** Connections whose first attempt failed: nothing waits for them to come up (callers fail at once). */
  private readonly everFailed = new Set<Redis>();
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
    this.redis = this.connect(url, 'gantry-responses');
    this.subscriber = this.connect(url, 'gantry-responses-subscriber');
    for (const [name, lua, numberOfKeys] of [
      ['gantryCreate', CREATE, 5],
      ['gantryUpdate', UPDATE, 5],
      ['gantryAppend', APPEND, 5],
      ['gantryRead', READ, 2],
      ['gantryItems', ITEMS, 0],
      ['gantryRemove', REMOVE, 5],
      ['gantryCancel', CANCEL, 2],
    ] as const) {
      this.redis.defineCommand(name, { lua, numberOfKeys });
    }
    this.scripts = this.redis as unknown as Scripts;
    this.subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message as Notice));
    this.subscriber.on('close', () => this.subscriptionsLost());
    this.subscriber.on('ready', () => this.resubscribe());
    // Back after a drop, the command connection re-reads for everyone: a cancel listener's check may have failed meanwhile.
    let commandReadies = 0;
    this.redis.on('ready', () => {
      if (commandReadies++ > 0) this.notifyAll('check');
    });
    this.poll = setInterval(() => this.notifyAll('check'), options.pollIntervalMs ?? 5_000);
    this.poll.unref();
  }

  async create(record: StoredResponse): Promise<void> {
    const id = record.response.id;
    const items = [...record.inputItems, ...outputItemsOf(record.response)];
    await this.send(this.redis, () =>
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
    const written = await this.send(this.redis, () =>
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
    const [response, input, previous] = await this.send(this.redis, () =>
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
    const pairs = (await this.send(this.redis, () =>
      this.scripts.gantryItems(this.prefix, Math.min(maxBytes, Number.MAX_SAFE_INTEGER), ...ids),
    )) as string[];
    for (let index = 0; index + 1 < pairs.length; index += 2) {
      const value = pairs[index + 1]!;
      found.set(pairs[index]!, JSON.parse(value.slice(value.indexOf('\n') + 1)) as StoredItem);
    }
    return found;
  }

  async delete(id: string): Promise<boolean> {
    const kept = await this.send(this.redis, () =>
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
      await this.send(this.redis, () =>
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
    return new Observable<StoredEvent>((subscriber) => {
      let next = firstWanted(after);
      let reading = false;
      let again = false;
      let stopped = false;
      const fail = (error: GatewayError) => {
        if (stopped) return;
        stopped = true;
        if (error.kind === 'unavailable') this.reportFailure('events', error);
        subscriber.error(error);
      };
      // Reads until caught up; a notice that comes meanwhile makes it read once more.
      const read = async (): Promise<void> => {
        if (stopped) return;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            for (;;) {
              const page = await this.readLog(id, next);
              if (stopped) return;
              if (page === undefined) return fail(noEventLog(id));
              const firstFound = page.events[0]?.sequence ?? page.next;
              if (firstFound > next) return fail(eventsDropped(next - 1, firstFound));
              for (const event of page.events) {
                next = event.sequence + 1;
                subscriber.next(event);
                if (stopped) return;
              }
              if (page.final && next >= page.next) {
                stopped = true;
                return subscriber.complete();
              }
              if (page.events.length < this.readBatch) break;
            }
          } while (again);
        } catch (error) {
          fail(error instanceof GatewayError ? error : storeUnavailable(error));
        } finally {
          reading = false;
        }
      };
      const listener: ChannelListener = {
        notify: () => void read(),
        lost: (error) => fail(storeUnavailable(error)),
      };
      this.listen(id, listener).then(
        () => read(),
        (error: unknown) => fail(error instanceof GatewayError ? error : storeUnavailable(error)),
      );
      return () => {
        stopped = true;
        this.unlisten(id, listener);
      };
    });
  }

  async requestCancel(id: string): Promise<void> {
    await this.send(this.redis, () =>
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
        this.send(this.redis, () => this.redis.exists(this.keysOf(id)[4])).then(
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
      this.listen(id, listener).then(check, (error: Error) => this.reportFailure('cancel', error));
      return () => {
        done = true;
        this.unlisten(id, listener);
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
    const closing = new GatewayError('unavailable', 'The response store was closed.');
    for (const channel of [...this.channels.values()])
      for (const listener of [...channel.listeners]) listener.lost(closing);
    this.channels.clear();
    // QUIT is answered after what was sent before it; a Redis that does not answer is not waited for.
    let timer: NodeJS.Timeout | undefined;
    const quits = Promise.all(
      [this.redis, this.subscriber].map((connection) => connection.quit().catch(() => undefined)),
    );
    await Promise.race([quits, new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs * 2)))]);
    clearTimeout(timer);
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  private connect(url: string, connectionName: string): Redis {
    const connection = new Redis(url, {
      connectionName,
      // No offline queue, no resending after a reconnect, no retries: a command runs now or fails.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      autoResubscribe: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.timeoutMs,
      retryStrategy: (attempt: number) => Math.min(attempt * 50, 500),
      // A Redis that stops answering (host gone, no reset) is dropped and reconnected.
      socketTimeout: Math.max(5_000, this.timeoutMs * 10),
    });
    connection.on('error', (error: Error) => {
      this.everFailed.add(connection);
      this.reportFailure('connection', error);
    });
    this.firstReady.set(connection, new Promise((resolve) => connection.once('ready', () => resolve())));
    connection.once('ready', () => this.everReady.add(connection));
    return connection;
  }

  /** Until a connection is first up, a call waits for it (within the timeout); once it was up, or failed, never. */
  private async ready(connection: Redis): Promise<void> {
    if (
      this.everReady.has(connection) ||
      this.everFailed.has(connection) ||
      !['wait', 'connecting', 'connect'].includes(connection.status)
    )
      return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.firstReady.get(connection),
      new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** Runs one command now, or fails at once when the connection is not up; any failure is `unavailable`, but a script's own refusal. */
  private async send<T>(connection: Redis, command: () => Promise<T>): Promise<T> {
    if (this.closed) throw storeUnavailable(new Error('the store was closed'));
    await this.ready(connection);
    if (connection.status !== 'ready')
      throw storeUnavailable(new Error(`Redis is not connected (${connection.status})`));
    try {
      return await command();
    } catch (error) {
      const message = error instanceof ReplyError ? (error as Error).message : '';
      if (message.includes(SCRIPT_ERROR))
        throw new Error(message.slice(message.indexOf(SCRIPT_ERROR) + SCRIPT_ERROR.length).trim(), { cause: error });
      throw storeUnavailable(error);
    }
  }

  private async readLog(
    id: string,
    next: number,
  ): Promise<{ next: number; final: boolean; events: StoredEvent[] } | undefined> {
    const [state, stream] = [this.keysOf(id)[3], this.keysOf(id)[2]];
    const reply = (await this.send(this.redis, () =>
      this.scripts.gantryRead(state, stream, `0-${next + 1}`, this.readBatch),
    )) as [string, string, [string, string[]][]] | null;
    if (reply === null) return undefined;
    const [nextSequence, final, entries] = reply;
    return { next: Number(nextSequence), final: final === '1', events: entries.map(storedEventOf) };
  }

  private keysOf(id: string): [string, string, string, string, string] {
    const prefix = this.prefix;
    return [`${prefix}r:${id}`, `${prefix}s:${id}`, `${prefix}e:${id}`, `${prefix}l:${id}`, `${prefix}c:${id}`];
  }

  private channelOf(id: string): string {
    return `${this.prefix}n:${id}`;
  }

  /** Adds a listener to the response's channel; resolves once the channel is subscribed. */
  private listen(id: string, listener: ChannelListener): Promise<void> {
    const name = this.channelOf(id);
    let channel = this.channels.get(name);
    if (channel === undefined) {
      channel = { listeners: new Set(), live: false };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    return (channel.subscribed ??= this.subscribe([[name, channel]]));
  }

  private unlisten(id: string, listener: ChannelListener): void {
    const name = this.channelOf(id);
    const channel = this.channels.get(name);
    if (channel === undefined || !channel.listeners.delete(listener) || channel.listeners.size > 0) return;
    this.channels.delete(name);
    // Sent after any SUBSCRIBE of the same channel on this connection, so it lands after it.
    if (this.subscriber.status === 'ready') this.subscriber.unsubscribe(name).catch(() => undefined);
  }

  private subscribe(channels: [string, Channel][]): Promise<void> {
    const attempt = this.send(this.subscriber, () => this.subscriber.subscribe(...channels.map(([name]) => name))).then(
      () => {
        for (const [, channel] of channels) if (channel.subscribed === attempt) channel.live = true;
      },
    );
    for (const [, channel] of channels) channel.subscribed = attempt;
    attempt.catch(() => {
      for (const [, channel] of channels) if (channel.subscribed === attempt) channel.subscribed = undefined;
    });
    return attempt;
  }

  private dispatch(name: string, notice: Notice): void {
    for (const listener of [...(this.channels.get(name)?.listeners ?? [])]) listener.notify(notice);
  }

  private notifyAll(notice: Notice): void {
    for (const channel of [...this.channels.values()])
      for (const listener of [...channel.listeners]) listener.notify(notice);
  }

  /** The subscriber connection dropped: its subscriptions went with it (notices in between are lost). */
  private subscriptionsLost(): void {
    const error = new Error('the Redis subscriber connection was lost');
    for (const channel of [...this.channels.values()]) {
      const wasLive = channel.live;
      channel.live = false;
      channel.subscribed = undefined;
      if (wasLive) for (const listener of [...channel.listeners]) listener.lost(error);
    }
  }

  /** The subscriber connection is (back) up: the channels still listened to subscribe again and read what they missed. */
  private resubscribe(): void {
    const pending = [...this.channels].filter(([, channel]) => channel.subscribed === undefined);
    if (pending.length === 0) return;
    this.subscribe(pending).then(
      () => {
        for (const [, channel] of pending) for (const listener of [...channel.listeners]) listener.notify('check');
      },
      (error: Error) => this.reportFailure('connection', error),
    );
  }

  private reportFailure(operation: ResponseStoreOperation, error: Error): void {
    // What closing tears down is no failure.
    if (!this.closed) this.failureListener?.(operation, error);
  }
}

function itemPairs(items: readonly StoredItem[]): string[] {
  const pairs: string[] = [];
  for (const item of items) if (typeof item.id === 'string') pairs.push(item.id, JSON.stringify(item));
  return pairs;
}

function storedEventOf([entryId, fields]: [string, string[]]): StoredEvent {
  let event = '';
  let data = '';
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index] === 'e') event = fields[index + 1]!;
    else if (fields[index] === 'd') data = fields[index + 1]!;
  }
  return { sequence: Number(entryId.slice(entryId.indexOf('-') + 1)) - 1, event, data };
}
