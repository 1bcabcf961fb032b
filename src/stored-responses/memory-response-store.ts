import { Observable, type Subscriber } from 'rxjs';
import { ResponsesConfig } from '../config/responses-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { fitBatch, noEventLog, outputItemsOf } from './event-log-rules.js';
import { MemoryEventLog, textBytes } from './memory-event-log.js';
import { ResponseScope } from './response-scope.js';
import { StoreShares } from './store-shares.js';
import {
  mayReplace,
  RUNNING_STATUSES,
  type ResponseObject,
  type ResponseStore,
  type ResponseStoreOperation,
  type StoredEvent,
  type StoredItem,
  type StoredResponse,
} from './response-store.js';

export interface MemoryResponseStoreOptions {
  ttlSeconds?: number;
  maxStoredResponses?: number;
  maxEventsPerResponse?: number;
  maxStoredBytes?: number;
  /** Milliseconds now; tests move it. */
  now?: () => number;
  /** How often expired responses are swept when nothing touches the store (an unref'd timer). */
  sweepIntervalMs?: number;
}

/**
 * One kept response. Everything is held as JSON text: a copy no caller can change, about a byte
 * per character, and the size the byte bound counts.
 */
interface Entry {
  id: string;
  /** The API key whose response it is (see ResponseScope). */
  owner: string;
  responseJson: string;
  inputJsons: string[];
  /** The ids of the input items, in order (undefined where an item has none). */
  inputIds: (string | undefined)[];
  previousResponseId: string | null;
  /** The kept Response's status. */
  status: string;
  /** The items findable through this response, by id: its input, then its output over it. */
  items: Map<string, string>;
  /** JSON bytes of the Response and the items; `bytes` adds the kept events'. */
  recordBytes: number;
  bytes: number;
  expiresAt: number;
  log?: MemoryEventLog;
  cancelRequested: boolean;
}

const DEFAULTS = new ResponsesConfig();

/**
 * Stored responses in this process: bounded by count, JSON bytes, events per response and TTL.
 * Entries sit in one Map in the order of their last write, which with one TTL for all is also
 * the order they expire in: expiry takes from its front, in O(1). Room is made fairly between
 * API keys, and never by letting a running response go (StoreShares); a response that cannot fit
 * (larger than the byte bound, or no room beside the running ones) is refused, not kept at the
 * cost of everything else.
 */
export class MemoryResponseStore implements ResponseStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  /** Which entry answers for an item id: the last one to write it. */
  private readonly itemOwners = new Map<string, Entry>();
  private readonly cancelListeners = new Map<string, Set<Subscriber<void>>>();
  private readonly ttlMs: number;
  private readonly maxResponses: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private totalBytes = 0;
  private readonly shares: StoreShares<Entry>;

  constructor(options: MemoryResponseStoreOptions = {}) {
    this.ttlMs = (options.ttlSeconds ?? DEFAULTS.ttlSeconds) * 1000;
    this.maxResponses = options.maxStoredResponses ?? DEFAULTS.maxStoredResponses;
    this.maxEvents = options.maxEventsPerResponse ?? DEFAULTS.maxEventsPerResponse;
    this.maxBytes = options.maxStoredBytes ?? DEFAULTS.maxStoredBytes;
    this.now = options.now ?? Date.now;
    this.shares = new StoreShares<Entry>(this.maxBytes, this.maxResponses);
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? Math.min(this.ttlMs, 60_000));
    this.sweeper.unref();
  }

  /** Responses kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** JSON bytes kept now (responses, items, events). */
  get bytes(): number {
    return this.totalBytes;
  }

  async create(record: StoredResponse): Promise<void> {
    this.sweep();
    const id = record.response.id;
    const existing = this.entries.get(id);
    if (existing) this.remove(existing);
    const entry: Entry = {
      id,
      owner: ResponseScope.ownerOf(id),
      responseJson: '',
      inputJsons: record.inputItems.map((item) => JSON.stringify(item)),
      inputIds: record.inputItems.map((item) => (typeof item.id === 'string' ? item.id : undefined)),
      previousResponseId: record.previousResponseId,
      status: record.response.status,
      items: new Map(),
      recordBytes: 0,
      bytes: 0,
      expiresAt: 0,
      cancelRequested: false,
    };
    this.entries.set(id, entry);
    this.shares.add(entry);
    try {
      this.write(entry, record.response, true);
    } catch (error) {
      this.remove(entry);
      throw error;
    }
  }

  async update(response: ResponseObject): Promise<boolean> {
    this.sweep();
    const entry = this.entries.get(response.id);
    if (entry === undefined || !mayReplace(entry.status, response.status)) return false;
    this.write(entry, response);
    return true;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    this.sweep();
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    return {
      response: JSON.parse(entry.responseJson) as ResponseObject,
      inputItems: entry.inputJsons.map((json) => JSON.parse(json) as StoredItem),
      previousResponseId: entry.previousResponseId,
    };
  }

  async items(ids: readonly string[], maxBytes = Infinity): Promise<Map<string, StoredItem>> {
    this.sweep();
    const found = new Map<string, StoredItem>();
    let bytes = 0;
    for (const id of ids) {
      const json = this.itemOwners.get(id)?.items.get(id);
      if (json === undefined) continue;
      found.set(id, JSON.parse(json) as StoredItem);
      bytes += textBytes(json);
      if (bytes > maxBytes) break;
    }
    return found;
  }

  async delete(id: string): Promise<boolean> {
    this.sweep();
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.remove(entry);
    return true;
  }

  async append(id: string, events: readonly StoredEvent[], final: boolean): Promise<void> {
    this.sweep();
    const entry = this.entries.get(id);
    if (!entry) return;
    const log = (entry.log ??= new MemoryEventLog());
    const fit = fitBatch(events, log.next, log.final);
    if ('problem' in fit) throw new Error(fit.problem);
    const { copies, bytes } = log.add(events.slice(fit.skip), final);
    let added = bytes;
    // A running response of a key over its share, in a full store: its own oldest events go
    // rather than another key's kept responses.
    const squeezed = RUNNING_STATUSES.has(entry.status) && this.shares.overShare(entry.owner);
    // Past the count bound, or past the whole byte bound, the oldest events go.
    // `added` and `log.kept` change in the loop; `squeezed` is fixed for it.
    // oxlint-disable no-unmodified-loop-condition
    while (
      log.kept > this.maxEvents ||
      ((entry.bytes + added > this.maxBytes || (squeezed && this.totalBytes + added > this.maxBytes)) && log.kept > 0)
    )
      added -= log.dropOldest();
    // oxlint-enable no-unmodified-loop-condition
    log.compact();
    this.resize(entry, entry.bytes + added);
    this.touch(entry);
    log.tell(copies);
    this.makeRoom(entry);
  }

  events(id: string, after: number): Observable<StoredEvent> {
    return new Observable<StoredEvent>((subscriber) => {
      this.sweep();
      const log = this.entries.get(id)?.log;
      if (!log) return subscriber.error(noEventLog(id));
      return log.follow(after, subscriber);
    });
  }

  async requestCancel(id: string): Promise<void> {
    this.sweep();
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.cancelRequested = true;
    const listeners = this.cancelListeners.get(id);
    this.cancelListeners.delete(id);
    for (const listener of listeners ?? []) {
      listener.next();
      listener.complete();
    }
  }

  cancelRequests(id: string): Observable<void> {
    return new Observable<void>((subscriber) => {
      this.sweep();
      if (this.entries.get(id)?.cancelRequested) {
        subscriber.next();
        return subscriber.complete();
      }
      const listeners = this.cancelListeners.get(id) ?? new Set();
      this.cancelListeners.set(id, listeners);
      listeners.add(subscriber);
      return () => {
        listeners.delete(subscriber);
        if (listeners.size === 0 && this.cancelListeners.get(id) === listeners) this.cancelListeners.delete(id);
      };
    });
  }

  /** Nothing fails in memory: the listener is never called. */
  onFailure(_listener: (operation: ResponseStoreOperation, error: Error) => void): void {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const closed = new GatewayError('unavailable', 'The response store was closed.');
    for (const entry of this.entries.values()) entry.log?.fail(closed);
    for (const entry of this.entries.values()) this.shares.remove(entry);
    this.entries.clear();
    this.itemOwners.clear();
    this.cancelListeners.clear();
    this.totalBytes = 0;
  }

  /** Forgets the responses whose TTL has passed; returns how many. Runs on every call and on a timer. */
  sweep(): number {
    const now = this.now();
    let swept = 0;
    for (const entry of this.entries.values()) {
      if (entry.expiresAt > now) break;
      this.remove(entry);
      swept++;
    }
    return swept;
  }

  /**
   * Sets an entry's Response and re-indexes its items (input, then output over it). Refuses,
   * changing nothing, a response larger than the byte bound, and a new one (`fresh`) that does
   * not fit beside the running ones (a kept response's new state skips that second check only).
   */
  private write(entry: Entry, response: ResponseObject, fresh = false): void {
    const items = new Map<string, string>();
    let recordBytes = 0;
    entry.inputJsons.forEach((json, index) => {
      recordBytes += textBytes(json);
      const id = entry.inputIds[index];
      if (id !== undefined) items.set(id, json);
    });
    for (const item of outputItemsOf(response)) {
      const json = JSON.stringify(item);
      recordBytes += textBytes(json);
      items.set(item.id, json);
    }
    const responseJson = JSON.stringify(response);
    recordBytes += textBytes(responseJson);
    const bytes = entry.bytes - entry.recordBytes + recordBytes;
    if (recordBytes > this.maxBytes) {
      throw new GatewayError(
        'payload_too_large',
        `This response (${recordBytes} bytes of JSON) is larger than the response store holds (responses.maxStoredBytes).`,
        {
          code: 'response_too_large',
        },
      );
    }
    const pinned = this.shares.pinned;
    if (fresh && RUNNING_STATUSES.has(response.status) && this.shares.overShare(entry.owner)) {
      throw new GatewayError(
        'unavailable',
        'This API key holds more than its share of the response store in running responses; retry when one ends.',
        { code: 'response_store_full', retryAfterSeconds: 1 },
      );
    }
    if (fresh && (pinned.bytes + bytes > this.maxBytes || pinned.count + 1 > this.maxResponses)) {
      throw new GatewayError('unavailable', 'The response store is full of running responses; retry shortly.', {
        code: 'response_store_full',
        retryAfterSeconds: 1,
      });
    }
    for (const id of entry.items.keys())
      if (!items.has(id) && this.itemOwners.get(id) === entry) this.itemOwners.delete(id);
    for (const id of items.keys()) this.itemOwners.set(id, entry);
    entry.items = items;
    entry.responseJson = responseJson;
    this.resize(entry, bytes);
    entry.recordBytes = recordBytes;
    this.touch(entry);
    entry.status = response.status;
    this.shares.written(entry, RUNNING_STATUSES.has(response.status));
    this.makeRoom(entry);
  }

  private resize(entry: Entry, bytes: number): void {
    this.shares.resize(entry, bytes);
    this.totalBytes += bytes - entry.bytes;
    entry.bytes = bytes;
  }

  /** A write: the entry moves to the back of the Map (the newest) and lives a TTL from now. */
  private touch(entry: Entry): void {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
    entry.expiresAt = this.now() + this.ttlMs;
  }

  /** Lets finished responses go, fairly (StoreShares), until both bounds hold or none but `written` is left to go. */
  private makeRoom(written: Entry): void {
    while (this.entries.size > this.maxResponses || this.totalBytes > this.maxBytes) {
      const victim = this.shares.victim(this.entries.size > this.maxResponses, written);
      if (victim === undefined) return;
      this.remove(victim);
    }
  }

  private remove(entry: Entry): void {
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    this.shares.remove(entry);
    this.totalBytes -= entry.bytes;
    for (const id of entry.items.keys()) if (this.itemOwners.get(id) === entry) this.itemOwners.delete(id);
    if (entry.log?.followed) entry.log.fail(noEventLog(entry.id));
  }
}
