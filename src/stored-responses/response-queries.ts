import { GatewayError } from '../errors/gateway-error.js';
import type { StoredItem } from './response-store.js';

// The queries of the stored-response routes: a page of input items, and where a resumed stream starts.

/** `GET /v1/responses/{id}/input_items` query, as sent. */
export interface InputItemsQuery {
  limit?: unknown;
  order?: unknown;
  after?: unknown;
}

/** One page of input items, as OpenAI lists them. */
export interface ItemPage {
  object: 'list';
  data: StoredItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/**
 * A page of `items`: `order` `desc` (the default) from the last item, `asc` from the first;
 * `after` an item id to start behind; `limit` 1 to 100 (default 20). A bad value is a 400 naming it.
 */
export function inputItemsPage(items: readonly StoredItem[], query: InputItemsQuery): ItemPage {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new GatewayError('invalid_request', 'limit must be an integer from 1 to 100', { param: 'limit' });
  }
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw new GatewayError('invalid_request', "order must be 'asc' or 'desc'", { param: 'order' });
  const ordered = order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const index = ordered.findIndex((item) => item.id === query.after);
    if (index === -1)
      throw new GatewayError(
        'invalid_request',
        `No input item with id '${typeof query.after === 'string' ? query.after : JSON.stringify(query.after)}' in this response.`,
        {
          param: 'after',
        },
      );
    start = index + 1;
  }
  const data = ordered.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + limit < ordered.length,
  };
}

/** `starting_after`: the sequence number after which to resume; absent means from the start. */
export function startingAfter(value: unknown): number {
  if (value === undefined) return -1;
  const number = Number(value);
  // A safe integer: past 2^53 a number no longer names one sequence (nor one Redis Stream entry).
  if (typeof value !== 'string' || value.trim() === '' || !Number.isSafeInteger(number) || number < -1) {
    throw new GatewayError(
      'invalid_request',
      `starting_after must be an integer sequence number from 0 to ${Number.MAX_SAFE_INTEGER}`,
      { param: 'starting_after' },
    );
  }
  return number;
}
