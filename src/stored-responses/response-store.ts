import type { Observable } from 'rxjs';

/** A Responses item as the API shows it (a message, reasoning, a function call or its output), with its id. */
export type StoredItem = Record<string, unknown> & { id: string };

/** A Response object as the API shows it (`object: 'response'`, `status`, `output`, ...). */
export type ResponseObject = Record<string, unknown> & { id: string; status: string; output: unknown[] };

/** Statuses of a response still running (a background one): `queued`, `in_progress`. */
export const RUNNING_STATUSES: ReadonlySet<string> = new Set(['queued', 'in_progress']);

/** Whether a kept response in state `kept` may be written `next`: a final state is never replaced by another. */
export function mayReplace(kept: string, next: string): boolean {
  return RUNNING_STATUSES.has(kept) || kept === next;
}

/** One response kept for `GET /v1/responses/{id}`, `previous_response_id` and `input_items`. */
export interface StoredResponse {
  /** The Response object as last written: `queued`, `in_progress`, then its final state. */
  response: ResponseObject;
  /** The items this request gave as input, in order, each with an id (the request's own input only). */
  inputItems: StoredItem[];
  /** The response this one continued: its conversation comes before `inputItems`. */
  previousResponseId: string | null;
}

/** One event of a background response's stream: an SSE frame and its `sequence_number`. */
export interface StoredEvent {
  sequence: number;
  /** The SSE `event:` name (`response.output_text.delta`, ...). */
  event: string;
  /** The SSE `data:` text (the event's JSON, `sequence_number` included). */
  data: string;
}

/** Why a store operation failed, for `gantry_response_store_errors_total`. */
export type ResponseStoreOperation = 'read' | 'write' | 'events' | 'cancel' | 'connection';

/**
 * Where stored responses live: in this process (memory) or shared by every replica (redis).
 * Every method may reject when the store cannot be reached; callers turn that into a 503.
 * (Both stores reject then with `GatewayError('unavailable')`, code `response_store_unavailable`.)
 * Everything kept expires `ttlSeconds` after its last write.
 */
export interface ResponseStore {
  readonly kind: 'memory' | 'redis';

  /** Keeps a new response with its input items; its input and output items become findable by id. */
  create(record: StoredResponse): Promise<void>;

  /**
   * Replaces the Response object of a kept response (a new status, its output); its output items
   * become findable by id. Atomic with its check: nothing is written, and false returned, when the
   * response is not kept (deleted, expired) or its kept state is final and `response` is another
   * (see mayReplace): a final state, once written, stands.
   */
  update(response: ResponseObject): Promise<boolean>;

  get(id: string): Promise<StoredResponse | undefined>;

  /**
   * Items of kept responses by id (input or output items); an id not found is absent from the map.
   * Reads them in order and stops once the JSON bytes of those found pass `maxBytes`: the map then
   * holds the item that passed it and none after (its caller, which counts them, refuses anyway).
   */
  items(ids: readonly string[], maxBytes?: number): Promise<Map<string, StoredItem>>;

  /** Forgets a response, its items and its events; false when there was none. */
  delete(id: string): Promise<boolean>;

  /**
   * Appends events to a response's log, in order (sequences strictly increasing from 0, no gaps).
   * `final`: the last event of the stream is among them; the log is closed.
   * Past `maxEventsPerResponse` the oldest events are dropped.
   * An empty batch opens the log (a follower may attach before the first event); a write of the
   * response (create, update, append) keeps all of it `ttlSeconds` more. Nothing is kept for a
   * response that is not kept (never created, deleted, expired). Events the log already holds are
   * skipped, so a batch may be sent again after a failure (a timed-out command may have run). A
   * batch that leaves a gap, or adds to a log whose final event is in, is refused with a plain
   * Error, the log unchanged.
   */
  append(id: string, events: readonly StoredEvent[], final: boolean): Promise<void>;

  /**
   * The events of a response's log with `sequence > after`: the kept ones, then each new one as
   * it is appended (from any replica), completing after the final one. Errors with a
   * `GatewayError('not_found')` when there is no log, and `GatewayError('invalid_request')` when
   * events after `after` were already dropped. Unsubscribing stops following. `after` -1: from
   * the first event. A follower errors with `not_found` when the response is deleted (or expires,
   * or the memory store lets it go) and with `unavailable` when the store cannot be reached.
   */
  events(id: string, after: number): Observable<StoredEvent>;

  /** Asks whichever replica runs the response to stop it. Remembered until the response expires; nothing for a response not kept. */
  requestCancel(id: string): Promise<void>;

  /**
   * Emits once when a cancel is (or was already) requested for `id`, from any replica, then
   * completes. It never errors: while the store cannot be reached it waits (failures go to
   * `onFailure`), and it looks again once the store is back.
   */
  cancelRequests(id: string): Observable<void>;

  /** Reports failures that no caller sees (the connection, followers, cancel listeners). One listener. */
  onFailure(listener: (operation: ResponseStoreOperation, error: Error) => void): void;

  close(): Promise<void>;
}

/**
 * The store that `store: memory` uses when the instance shares one (a worker of several: the
 * primary's, over its IPC link); absent in a single process, which keeps a MemoryResponseStore.
 * A class, so that it can be Nest's token.
 */
export abstract class InstanceResponseStore implements ResponseStore {
  readonly kind = 'memory' as const;
  abstract create(record: StoredResponse): Promise<void>;
  abstract update(response: ResponseObject): Promise<boolean>;
  abstract get(id: string): Promise<StoredResponse | undefined>;
  abstract items(ids: readonly string[], maxBytes?: number): Promise<Map<string, StoredItem>>;
  abstract delete(id: string): Promise<boolean>;
  abstract append(id: string, events: readonly StoredEvent[], final: boolean): Promise<void>;
  abstract events(id: string, after: number): Observable<StoredEvent>;
  abstract requestCancel(id: string): Promise<void>;
  abstract cancelRequests(id: string): Observable<void>;
  abstract onFailure(listener: (operation: ResponseStoreOperation, error: Error) => void): void;
  abstract close(): Promise<void>;
}
