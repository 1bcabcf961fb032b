import { Logger } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { GantryMetrics } from '../observability/metrics/gantry-metrics.js';
import { NOT_KEPT, type ResponseKeeping } from '../protocols/openai-responses/response-object.js';
import type { ResponsesInputItem } from '../protocols/openai-responses/responses-input.js';
import type { ResponsesRequestDto } from '../protocols/openai-responses/responses-request.dto.js';
import { asInput, conversationOf, storedInputItems } from './conversation-items.js';
import type { ResponseObject, ResponseStore, ResponseStoreOperation, StoredEvent, StoredItem, StoredResponse } from './response-store.js';

/** A Responses request with its stored state read: what to decode, and how to keep the answer. */
export interface PreparedResponse {
  /** The body to decode: the stored conversation before its own input, references replaced by their items, no `previous_response_id`. */
  body: ResponsesRequestDto;
  /** What the response says of its keeping (`store`, `background`, `previous_response_id`). */
  keeping: ResponseKeeping;
  /** The request's own input items, with ids, as `input_items` lists them. */
  inputItems: StoredItem[];
}

/** Statuses of a response that is still running. */
const RUNNING = new Set(['queued', 'in_progress']);
/** A chain of `previous_response_id`s longer than this is refused (a loop, or a runaway client). */
const MAX_CHAIN = 10_000;
const WARNING_INTERVAL_MS = 10_000;

/**
 * The stateful half of the Responses API over a ResponseStore: reads what a request continues
 * (`previous_response_id`, `item_reference`), keeps answers, and serves the read, delete and
 * cancel routes. Without a store (`responses.store: off`) it passes requests through untouched
 * and the decoder refuses the stateful fields as before.
 *
 * Reads that a request needs fail it with 503 when the store cannot be reached; keeping an
 * answer does not: the client gets its answer, the failure is counted and logged.
 */
export class StoredResponses {
  private readonly logger = new Logger('StoredResponses');
  private warnedAt = 0;
  private unwarned = 0;

  constructor(
    private readonly store: ResponseStore | undefined,
    private readonly metrics: Pick<GantryMetrics, 'responseStoreErrors'>,
  ) {
    store?.onFailure((operation, error) => this.failed(operation, error));
  }

  get enabled(): boolean {
    return this.store !== undefined;
  }

  /** Reads the stored state a request names; refuses unknown ids (400) and runs without a store (503). */
  async prepare(body: ResponsesRequestDto): Promise<PreparedResponse> {
    if (this.store === undefined) return { body, keeping: NOT_KEPT, inputItems: [] };
    const store = body.store !== false;
    if (body.background === true && !store) {
      throw new GatewayError('invalid_request', 'background responses must be stored: leave store unset or set it to true', { param: 'background' });
    }
    const keeping: ResponseKeeping = { store, background: body.background === true, previousResponseId: body.previous_response_id ?? null };
    const own = await this.resolveReferences(body.input);
    const history = body.previous_response_id === undefined ? [] : conversationOf(await this.chain(body.previous_response_id));
    const { previous_response_id: _continued, background: _background, ...rest } = body;
    const input = history.length === 0 && typeof own === 'string' ? own : [...history, ...(typeof own === 'string' ? storedInputItems(own).map(asInput) : own)];
    return { body: { ...rest, input } as ResponsesRequestDto, keeping, inputItems: store ? storedInputItems(own) : [] };
  }

  /** Keeps a finished foreground response; a failure is counted, not thrown (the client has its answer). */
  async keep(prepared: PreparedResponse, response: ResponseObject): Promise<void> {
    if (this.store === undefined || !prepared.keeping.store) return;
    try {
      await this.store.create({ response, inputItems: prepared.inputItems, previousResponseId: prepared.keeping.previousResponseId });
    } catch (error) {
      this.failed('write', error as Error);
    }
  }

  /** Keeps a background response as it starts; its client waits for this, so a failure is a 503. */
  async open(prepared: PreparedResponse, response: ResponseObject): Promise<void> {
    await this.guarded('write', () =>
      this.requireStore().create({ response, inputItems: prepared.inputItems, previousResponseId: prepared.keeping.previousResponseId }),
    );
  }

  /** A new state of a kept response; a failure is counted, not thrown. */
  async update(response: ResponseObject): Promise<void> {
    try {
      await this.requireStore().update(response);
    } catch (error) {
      this.failed('write', error as Error);
    }
  }

  /**
   * Appends to a background response's event log; false when the store failed (counted, not
   * thrown: the run goes on and sends the same events again with its next batch).
   */
  async append(id: string, events: readonly StoredEvent[], final: boolean): Promise<boolean> {
    try {
      await this.requireStore().append(id, events, final);
      return true;
    } catch (error) {
      this.failed('events', error as Error);
      return false;
    }
  }

  async retrieve(id: string): Promise<StoredResponse> {
    const record = await this.guarded('read', () => this.requireStore().get(id));
    if (record === undefined) throw notFound(id);
    return record;
  }

  /** Forgets a response (stopping it first if it still runs). */
  async remove(id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const record = await this.retrieve(id);
    if (RUNNING.has(record.response.status)) await this.guarded('cancel', () => this.requireStore().requestCancel(id));
    if (!(await this.guarded('write', () => this.requireStore().delete(id)))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  }

  /**
   * Stops a background response from any replica and answers with it, `cancelled`. The replica
   * running it writes that state; if none does in `waitMs` (it is gone), this one does.
   */
  async cancel(id: string, waitMs = 5_000): Promise<ResponseObject> {
    const record = await this.retrieve(id);
    if (record.response.background !== true) {
      throw new GatewayError('invalid_request', 'Only responses created with background: true can be cancelled.', { param: 'response_id' });
    }
    if (record.response.status === 'cancelled') return record.response;
    if (!RUNNING.has(record.response.status)) {
      throw new GatewayError('invalid_request', `Cannot cancel a response that is already ${record.response.status}.`, { param: 'response_id' });
    }
    const store = this.requireStore();
    await this.guarded('cancel', () => store.requestCancel(id));
    const deadline = Date.now() + waitMs;
    for (let pauseMs = 10; Date.now() < deadline; pauseMs = Math.min(pauseMs * 2, 200)) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const now = await this.guarded('read', () => store.get(id));
      if (now === undefined) throw notFound(id);
      if (!RUNNING.has(now.response.status)) return now.response;
    }
    const cancelled = { ...record.response, status: 'cancelled', completed_at: Math.floor(Date.now() / 1000) };
    await this.guarded('write', () => store.update(cancelled));
    return cancelled;
  }

  /** A background response's events after `after`, then the live ones to the end (any replica's). */
  events(id: string, after: number): Observable<StoredEvent> {
    return this.requireStore().events(id, after);
  }

  cancelRequests(id: string): Observable<void> {
    return this.requireStore().cancelRequests(id);
  }

  async close(): Promise<void> {
    await this.store?.close();
  }

  /** The response chain from `id` back to the first one, newest first. */
  private async chain(id: string): Promise<StoredResponse[]> {
    const chain: StoredResponse[] = [];
    const seen = new Set<string>();
    for (let next: string | null = id; next !== null; ) {
      if (seen.has(next) || chain.length >= MAX_CHAIN) {
        throw new GatewayError('invalid_request', `The chain of previous responses from '${id}' is too long or loops.`, { param: 'previous_response_id' });
      }
      seen.add(next);
      const current: string = next;
      const record: StoredResponse | undefined = await this.guarded('read', () => this.requireStore().get(current));
      if (record === undefined) {
        throw new GatewayError('invalid_request', `Previous response with id '${current}' not found.`, {
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        });
      }
      if (RUNNING.has(record.response.status)) {
        throw new GatewayError('invalid_request', `Previous response with id '${current}' is still ${record.response.status}; continue it once it has finished.`, {
          param: 'previous_response_id',
        });
      }
      chain.push(record);
      next = record.previousResponseId;
    }
    return chain;
  }

  /** The input with each `item_reference` replaced by the stored item it names. */
  private async resolveReferences(input: string | ResponsesInputItem[]): Promise<string | ResponsesInputItem[]> {
    if (typeof input === 'string') return input;
    const ids = input.flatMap((item) => (item.type === 'item_reference' ? [item.id] : []));
    if (ids.length === 0) return input;
    const found = await this.guarded('read', () => this.requireStore().items(ids));
    return input.map((item, index) => {
      if (item.type !== 'item_reference') return item;
      const stored = found.get(item.id);
      if (stored === undefined) {
        throw new GatewayError('invalid_request', `Item with id '${item.id}' not found.`, { param: `input[${index}].id`, code: 'item_not_found' });
      }
      return asInput(stored);
    });
  }

  private requireStore(): ResponseStore {
    if (this.store !== undefined) return this.store;
    throw new GatewayError('not_found', 'This gateway stores no responses (responses.store: off).', { code: 'response_store_off' });
  }

  /** Runs a store call; a store that cannot answer makes a 503 in the client's shape. */
  private async guarded<T>(operation: ResponseStoreOperation, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      this.failed(operation, error as Error);
      throw new GatewayError('unavailable', 'The response store cannot be reached; retry shortly.', {
        code: 'response_store_unavailable',
        retryAfterSeconds: 1,
        cause: error,
      });
    }
  }

  private failed(operation: ResponseStoreOperation, error: Error): void {
    this.metrics.responseStoreErrors.inc({ operation });
    this.unwarned += 1;
    const now = Date.now();
    if (now - this.warnedAt < WARNING_INTERVAL_MS) return;
    const more = this.unwarned > 1 ? ` (${this.unwarned} failures since the last warning)` : '';
    this.logger.warn(`The response store failed (${operation}: ${error.message})${more}.`);
    this.warnedAt = now;
    this.unwarned = 0;
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`, { param: 'response_id', code: 'response_not_found' });
}
