import { Logger } from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import type { ApiKeyRing } from '../auth/api-key-ring.js';
import { presentedKey } from '../auth/api-key.guard.js';
import { ResponsesConfig } from '../config/responses-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ThrottledWarning } from '../observability/logging/throttled-warning.js';
import type { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { NOT_KEPT, type ResponseKeeping } from '../protocols/openai-responses/response-object.js';
import type { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import type { SseFrame } from '../protocols/sse/sse-frame.js';
import { asInput, conversationOf, referencedIds, storedInputItems } from './conversation-items.js';
import { previousChain, resolveItemReferences } from './continued-input.js';
import { jsonBytes, ResolvedInputBudget } from './resolved-input-budget.js';
import { LeaseWatch } from './lease-watch.js';
import { ResponseScope } from './response-scope.js';
import { STORE_UNAVAILABLE, storeUnavailable } from './event-log-rules.js';
import { followedFrames, LEFT_BEHIND, type FollowerCutoff, type LeftRunCheck } from './stored-frames.js';
import {
  RUNNING_STATUSES,
  type ResponseObject,
  type ResponseStore,
  type ResponseStoreOperation,
  type StoredEvent,
  type StoredItem,
  type StoredResponse,
} from './response-store.js';

/** A Responses request with its stored state read: what to decode, and how to keep the answer. */
export interface PreparedResponse {
  /** The body to decode: the stored conversation before its own input, references replaced by their items, no `previous_response_id`. */
  body: ResponsesRequestDto;
  /** What the response says of its keeping (`store`, `background`, `previous_response_id`). */
  keeping: ResponseKeeping;
  /** The request's own input items, with ids, as `input_items` lists them. */
  inputItems: StoredItem[];
  /** Whose responses it sees and keeps (its API key's). */
  scope: ResponseScope;
}

export interface StoredResponsesOptions {
  keepaliveIntervalMs?: number;
  ttlSeconds?: number;
  /** `responses.maxResolvedInputBytes`. */
  maxResolvedInputBytes?: number;
  /** When followers stop at a shutdown; without it, they follow to the end. */
  followerCutoff?: FollowerCutoff;
}

const DEFAULTS = new ResponsesConfig();

/**
 * How a state write went: `written`; `refused` (the response is gone or already ended);
 * `too_large` (larger than the store holds: it never will take it); `failed` (the store failed).
 */
export type StateWrite = 'written' | 'refused' | 'too_large' | 'failed';
/** Where a running background response keeps its lease (taken off before anyone reads it). */
const LEASE_FIELD = 'gantry_lease_until';
const LEASE_RENEWALS = 3;
/** When a kept response was last written again to keep its conversation alive (taken off before anyone reads it). */
const REFRESHED_FIELD = 'gantry_refreshed_at';
const MIN_RENEWAL_MS = 1_000;
const MAX_RENEWAL_MS = 15_000;
/**
 * How long a cancel waits for the replica that runs the response to stop it, before writing
 * `cancelled` itself (that replica is gone). Longer than a Redis store's re-check of missed notices.
 */
const CANCEL_WAIT_MS = 8_000;

/**
 * The stateful half of the Responses API over a ResponseStore: reads what a request continues
 * (`previous_response_id`, `item_reference`), keeps answers, and serves the read, delete and
 * cancel routes. Without a store (`responses.store: off`) it passes requests through untouched
 * and the decoder refuses the stateful fields.
 *
 * Reads that a request needs fail it with 503 when the store cannot be reached; keeping an
 * answer does not: the client gets its answer, the failure is counted and logged.
 */
export class StoredResponses {
  private readonly logger = new Logger('StoredResponses');
  /** How often a background run renews its lease (three renewals long; see LeaseWatch): its keep-alive interval, within bounds. */
  readonly renewalMs: number;
  /** A response continued this long after its last write is written again: a live conversation outlives the TTL. */
  private readonly refreshAfterMs: number;
  private readonly failures = new ThrottledWarning((message) => this.logger.warn(message));
  private readonly maxResolvedInputBytes: number;
  private readonly followerCutoff?: FollowerCutoff;
  private readonly leases: LeaseWatch;

  constructor(
    private readonly store: ResponseStore | undefined,
    private readonly metrics: Pick<GantryMetrics, 'responseStoreErrors'>,
    private readonly keys: Pick<ApiKeyRing, 'isOpen' | 'identify'> = { isOpen: true, identify: () => undefined },
    {
      keepaliveIntervalMs = 15_000,
      ttlSeconds = 86_400,
      maxResolvedInputBytes = DEFAULTS.maxResolvedInputBytes,
      followerCutoff,
    }: StoredResponsesOptions = {},
  ) {
    this.maxResolvedInputBytes = maxResolvedInputBytes;
    this.followerCutoff = followerCutoff;
    this.renewalMs = Math.min(Math.max(keepaliveIntervalMs, MIN_RENEWAL_MS), MAX_RENEWAL_MS);
    this.leases = new LeaseWatch(this.leaseMs);
    this.refreshAfterMs = (ttlSeconds * 1000) / 2;
    store?.onFailure((operation, error) => this.failed(operation, error));
  }

  get enabled(): boolean {
    return this.store !== undefined;
  }

  /** The scope of the request with these headers: its API key's (the guard has checked the key). */
  scopeOf(headers: Record<string, string | string[] | undefined>): ResponseScope {
    if (this.keys.isOpen) return ResponseScope.OPEN;
    const presented = presentedKey(headers);
    return ResponseScope.ofKey(presented === undefined ? undefined : this.keys.identify(presented));
  }

  /** Reads the stored state a request names; refuses unknown ids (400) and runs without a store (503). */
  async prepare(body: ResponsesRequestDto, scope: ResponseScope = ResponseScope.OPEN): Promise<PreparedResponse> {
    if (this.store === undefined) return { body, keeping: NOT_KEPT, inputItems: [], scope };
    const store = body.store !== false;
    if (body.background === true && !store) {
      throw new GatewayError(
        'invalid_request',
        'background responses must be stored: leave store unset or set it to true',
        { param: 'background' },
      );
    }
    const keeping: ResponseKeeping = {
      store,
      background: body.background === true,
      previousResponseId: body.previous_response_id ?? null,
    };
    const budget = new ResolvedInputBudget(this.maxResolvedInputBytes);
    const references = referencedIds(body.input);
    // The request's own input counts too, once it brings in stored parts (alone, the body limit bounds it).
    if (references.length > 0 || body.previous_response_id !== undefined) budget.spend(jsonBytes(body.input), 'input');
    const own = await resolveItemReferences(body.input, references, budget, scope, (ids, maxBytes) =>
      this.guarded('read', () => this.requireStore().items(ids, maxBytes)),
    );
    const chain =
      body.previous_response_id === undefined
        ? []
        : await previousChain(body.previous_response_id, budget, async (id) => {
            const found = await this.guarded('read', () => this.requireStore().get(scope.id(id)));
            return found === undefined ? undefined : this.fromStore(scope, found);
          });
    this.refresh(scope, chain);
    const history = conversationOf(chain);
    const { previous_response_id: _continued, background: _background, ...rest } = body;
    const input =
      history.length === 0 && typeof own === 'string'
        ? own
        : [...history, ...(typeof own === 'string' ? storedInputItems(own).map(asInput) : own)];
    return {
      body: { ...rest, input } as ResponsesRequestDto,
      keeping,
      inputItems: store ? storedInputItems(own) : [],
      scope,
    };
  }

  /** Keeps a finished foreground response; a failure is counted, not thrown (the client has its answer). */
  async keep(prepared: PreparedResponse, response: ResponseObject): Promise<void> {
    if (this.store === undefined || !prepared.keeping.store) return;
    try {
      await this.store.create(scopedRecord(prepared, response));
    } catch (error) {
      this.failed('write', error as Error);
    }
  }

  /** Keeps a background response as it starts; its client waits for this, so a failure is a 503. */
  async open(prepared: PreparedResponse, response: ResponseObject): Promise<void> {
    await this.guarded('write', () => this.requireStore().create(scopedRecord(prepared, this.leased(response))));
  }

  /**
   * A new state of a kept response, `running` (its lease renewed) or final. `refused` when the
   * response is gone or already ended (a final state stands: see ResponseStore.update);
   * `too_large` when the store refuses it for its size; `failed` when the store failed (counted,
   * not thrown).
   */
  async update(scope: ResponseScope, response: ResponseObject, running: boolean): Promise<StateWrite> {
    try {
      const written = await this.requireStore().update(scope.response(running ? this.leased(response) : response));
      this.answered();
      return written ? 'written' : 'refused';
    } catch (error) {
      // The store answered: no fault of its own, and no use asking again.
      if (error instanceof GatewayError && error.kind === 'payload_too_large') return 'too_large';
      this.failed('write', error as Error);
      return 'failed';
    }
  }

  /**
   * Appends to a background response's event log; false when the store failed (counted, not
   * thrown: the run goes on and sends the same events again with its next batch).
   */
  async append(scope: ResponseScope, id: string, events: readonly StoredEvent[], final: boolean): Promise<boolean> {
    try {
      await this.requireStore().append(scope.id(id), events, final);
      this.answered();
      return true;
    } catch (error) {
      this.failed('events', error as Error);
      return false;
    }
  }

  async retrieve(scope: ResponseScope, id: string): Promise<StoredResponse> {
    const record = await this.guarded('read', () => this.requireStore().get(scope.id(id)));
    if (record === undefined) throw notFound(id);
    return this.fromStore(scope, record);
  }

  /**
   * Writes again the responses of a chain being continued whose last write is half a TTL old
   * (each at most once per half TTL), so that an active conversation does not expire under its
   * client. Not waited for: a failure is counted, and only shortens their life.
   */
  private refresh(scope: ResponseScope, chain: readonly StoredResponse[]): void {
    const now = Date.now();
    for (const { response } of chain) {
      const written =
        typeof response[REFRESHED_FIELD] === 'number'
          ? response[REFRESHED_FIELD]
          : Number(response.completed_at ?? response.created_at) * 1000;
      if (!(now - (written as number) > this.refreshAfterMs)) continue;
      void this.update(scope, { ...response, [REFRESHED_FIELD]: now }, false);
    }
  }

  /** A stored record as its client sees it: its ids unscoped, its lease read (a left run is `failed`: see LeaseWatch). */
  private fromStore(scope: ResponseScope, stored: StoredResponse): StoredResponse {
    const record = scope.record(stored);
    const { [LEASE_FIELD]: leaseUntil, [REFRESHED_FIELD]: _refreshed, ...response } = record.response;
    if (
      leaseUntil === undefined ||
      !RUNNING_STATUSES.has(response.status as string) ||
      typeof leaseUntil !== 'number' ||
      !this.leases.isLeft(stored.response.id, leaseUntil)
    ) {
      return { ...record, response: response as ResponseObject };
    }
    const failed = {
      ...response,
      status: 'failed',
      error: { code: 'server_error', message: LEFT_BEHIND },
    } as ResponseObject;
    // Written back, so every replica agrees from now on (a failure leaves it to the next reader).
    void this.update(scope, failed, false);
    return { ...record, response: failed };
  }

  /** What a follower of a background response asks when no event comes for a while. */
  private leftRunCheck(scope: ResponseScope, id: string): LeftRunCheck {
    return { isLeft: () => this.isLeft(scope, id), quietMs: (LEASE_RENEWALS + 1) * this.renewalMs };
  }

  /** Whether a background response's run was left by its replica (or the response is gone). */
  private async isLeft(scope: ResponseScope, id: string): Promise<boolean> {
    try {
      const record = await this.retrieve(scope, id);
      return (
        record.response.status === 'failed' &&
        (record.response.error as { message?: string } | null)?.message === LEFT_BEHIND
      );
    } catch {
      return false;
    }
  }

  /** `response` with a lease of three renewals from now. */
  private leased(response: ResponseObject): ResponseObject {
    return { ...response, [LEASE_FIELD]: Date.now() + this.leaseMs };
  }

  private get leaseMs(): number {
    return LEASE_RENEWALS * this.renewalMs;
  }

  /** Forgets a response (stopping it first if it still runs). */
  async remove(scope: ResponseScope, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const record = await this.retrieve(scope, id);
    if (RUNNING_STATUSES.has(record.response.status))
      await this.guarded('cancel', () => this.requireStore().requestCancel(scope.id(id)));
    if (!(await this.guarded('write', () => this.requireStore().delete(scope.id(id))))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  }

  /**
   * Stops a background response from any replica and answers with it, `cancelled`. The replica
   * running it writes that state; if none does in `waitMs` (it is gone), this one does.
   */
  async cancel(scope: ResponseScope, id: string, waitMs = CANCEL_WAIT_MS): Promise<ResponseObject> {
    const record = await this.retrieve(scope, id);
    if (record.response.background !== true) {
      throw new GatewayError('invalid_request', 'Only responses created with background: true can be cancelled.', {
        param: 'response_id',
      });
    }
    if (record.response.status === 'cancelled') return record.response;
    if (!RUNNING_STATUSES.has(record.response.status)) {
      throw new GatewayError('invalid_request', `Cannot cancel a response that is already ${record.response.status}.`, {
        param: 'response_id',
      });
    }
    const store = this.requireStore();
    await this.guarded('cancel', () => store.requestCancel(scope.id(id)));
    const deadline = Date.now() + waitMs;
    for (let pauseMs = 10; Date.now() < deadline; pauseMs = Math.min(pauseMs * 2, 200)) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const now = await this.guarded('read', () => store.get(scope.id(id)));
      if (now === undefined) throw notFound(id);
      const current = this.fromStore(scope, now).response;
      if (!RUNNING_STATUSES.has(current.status)) return current;
    }
    const cancelled = { ...record.response, status: 'cancelled', completed_at: Math.floor(Date.now() / 1000) };
    if (await this.guarded('write', () => store.update(scope.response(cancelled)))) return cancelled;
    // It ended meanwhile (or went): its own end stands.
    return (await this.retrieve(scope, id)).response;
  }

  /**
   * A background response's events after sequence `after`, then the live ones to the end (any
   * replica's), as SSE frames; a run whose replica left ends them with an `error` event.
   */
  follow(scope: ResponseScope, id: string, after: number): Observable<SseFrame> {
    const events$ = this.requireStore()
      .events(scope.id(id), after)
      .pipe(catchError((error: unknown) => throwError(() => scope.clientError(error))));
    return followedFrames(events$, after, this.leftRunCheck(scope, id), this.followerCutoff);
  }

  cancelRequests(scope: ResponseScope, id: string): Observable<void> {
    return this.requireStore().cancelRequests(scope.id(id));
  }

  async close(): Promise<void> {
    await this.store?.close();
  }

  private requireStore(): ResponseStore {
    if (this.store !== undefined) return this.store;
    throw new GatewayError('not_found', 'This gateway stores no responses (responses.store: off).', {
      code: 'response_store_off',
    });
  }

  /** Runs a store call; a store that cannot answer makes a 503 in the client's shape. */
  private async guarded<T>(operation: ResponseStoreOperation, call: () => Promise<T>): Promise<T> {
    try {
      const answer = await call();
      this.answered();
      return answer;
    } catch (error) {
      if (error instanceof GatewayError && error.code !== STORE_UNAVAILABLE) throw error;
      this.failed(operation, error as Error);
      throw error instanceof GatewayError ? error : storeUnavailable(error);
    }
  }

  /** The store answered: the leases it holds say something again (see LeaseWatch). */
  private answered(): void {
    this.leases.answered();
  }

  private failed(operation: ResponseStoreOperation, error: Error): void {
    // A store that refused a write it could not hold (memory: too large, full) did answer.
    if (!(error instanceof GatewayError) || error.code === STORE_UNAVAILABLE) this.leases.failed();
    this.metrics.responseStoreErrors.inc({ operation });
    this.failures.failure((more) => `The response store failed (${operation}: ${error.message})${more}.`);
  }
}

/** The record of a kept response, its ids in its scope. */
function scopedRecord({ scope, inputItems, keeping }: PreparedResponse, response: ResponseObject): StoredResponse {
  return {
    response: scope.response(response),
    inputItems: scope.items(inputItems),
    previousResponseId: keeping.previousResponseId === null ? null : scope.id(keeping.previousResponseId),
  };
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`, {
    param: 'response_id',
    code: 'response_not_found',
  });
}
