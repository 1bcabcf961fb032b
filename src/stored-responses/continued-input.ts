import { GatewayError } from '../errors/gateway-error.js';
import type { ResponsesInputItem } from '../protocols/openai-responses/responses-input.js';
import { asInput } from './conversation-items.js';
import { conversationBytes, jsonBytes, type ResolvedInputBudget } from './resolved-input-budget.js';
import type { ResponseScope } from './response-scope.js';
import { RUNNING_STATUSES, type StoredItem, type StoredResponse } from './response-store.js';

/** A chain of `previous_response_id`s longer than this is refused (a loop, or a runaway client). */
const MAX_CHAIN = 10_000;

/**
 * The response chain from `id` back to the first one, newest first, each counted in `budget`.
 * `read` gives a response as its client sees it (undefined: not found). A response still running
 * cannot be continued yet.
 */
export async function previousChain(
  id: string,
  budget: ResolvedInputBudget,
  read: (id: string) => Promise<StoredResponse | undefined>,
): Promise<StoredResponse[]> {
  const chain: StoredResponse[] = [];
  const seen = new Set<string>();
  for (let next: string | null = id; next !== null;) {
    if (seen.has(next) || chain.length >= MAX_CHAIN) {
      throw new GatewayError('invalid_request', `The chain of previous responses from '${id}' is too long or loops.`, {
        param: 'previous_response_id',
      });
    }
    seen.add(next);
    const current: string = next;
    const record = await read(current);
    if (record === undefined) {
      throw new GatewayError('invalid_request', `Previous response with id '${current}' not found.`, {
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      });
    }
    if (RUNNING_STATUSES.has(record.response.status)) {
      throw new GatewayError(
        'invalid_request',
        `Previous response with id '${current}' is still ${record.response.status}; continue it once it has finished.`,
        {
          param: 'previous_response_id',
        },
      );
    }
    budget.spend(conversationBytes(record), 'previous_response_id');
    chain.push(record);
    next = record.previousResponseId;
  }
  return chain;
}

/**
 * The input with each `item_reference` replaced by the stored item it names, each counted in
 * `budget` every time it is named. `items` reads each id once (in the store's scope), and no
 * further than the budget.
 */
export async function resolveItemReferences(
  input: string | ResponsesInputItem[],
  references: readonly string[],
  budget: ResolvedInputBudget,
  scope: ResponseScope,
  items: (ids: string[], maxBytes: number) => Promise<Map<string, StoredItem>>,
): Promise<string | ResponsesInputItem[]> {
  if (typeof input === 'string' || references.length === 0) return input;
  const found = await items(scope.ids(references), budget.remaining);
  const sizes = new Map<StoredItem, number>();
  return input.map((item, index) => {
    if (item.type !== 'item_reference') return item;
    const stored = found.get(scope.id(item.id));
    if (stored === undefined) {
      throw new GatewayError('invalid_request', `Item with id '${item.id}' not found.`, {
        param: `input[${index}].id`,
        code: 'item_not_found',
      });
    }
    let size = sizes.get(stored);
    if (size === undefined) sizes.set(stored, (size = jsonBytes(stored)));
    budget.spend(size, `input[${index}].id`);
    return asInput(scope.clientItem(stored));
  });
}
